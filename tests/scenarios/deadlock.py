"""Two threads take two locks in opposite order; the main thread joins one of them."""

import threading

from _ready import ready

checkpoint_lock = threading.Lock()
metrics_lock = threading.Lock()
both_hold_one = threading.Barrier(2)


def save_checkpoint():
    with checkpoint_lock:
        both_hold_one.wait()
        with metrics_lock:  # HANG-HERE:saver
            pass


def log_metrics():
    with metrics_lock:
        both_hold_one.wait()
        ready()
        with checkpoint_lock:  # HANG-HERE:logger
            pass


if __name__ == "__main__":
    saver = threading.Thread(target=save_checkpoint, name="saver")
    logger = threading.Thread(target=log_metrics, name="logger")
    saver.start()
    logger.start()
    saver.join()  # HANG-HERE:main
