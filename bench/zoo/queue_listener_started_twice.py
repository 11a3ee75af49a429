"""A QueueListener started twice (setup_logging() called by main and again by evaluate): stop() joins the thread that never gets the sentinel.

report: https://github.com/python/cpython/issues/132106
saw: QueueListener.start() could be called again while running, starting a second listener thread ("helps prevent a thread leak"); Python 3.14 now raises RuntimeError on a second start().
mechanism: each start() starts a new thread and keeps only the last in listener._thread. stop() enqueues ONE sentinel and joins that last thread; the first thread, waiting longer on the queue, is woken first, takes the sentinel and exits, so the joined thread waits on an empty queue forever.
expect: hung code.deadlock
"""
import logging
import logging.handlers
import queue
import sys
import time

from _zoo import ready

log_queue = queue.Queue(-1)
listener = None
log = logging.getLogger("train")


def setup_logging():  # "idempotent": the handlers are added once, but the listener is started on every call
    global listener  # noqa: PLW0603 (the report's own shape)
    if listener is None:
        listener = logging.handlers.QueueListener(log_queue, logging.StreamHandler(sys.stdout))
        logging.getLogger().addHandler(logging.handlers.QueueHandler(log_queue))
        logging.getLogger().setLevel(logging.INFO)
    listener.start()


def evaluate(weights):  # also usable on its own, so it sets up logging too
    setup_logging()
    time.sleep(1.0)  # score the held-out set
    return sum(weights) / len(weights)


if __name__ == "__main__":
    setup_logging()
    weights = [1.0] * 8
    for step in range(5):
        weights = [w * 0.9 for w in weights]
        log.info("step %d loss %.3f", step, sum(weights))
        time.sleep(0.2)
    score = evaluate(weights)
    ready()
    listener.stop()  # HANG-HERE
    print(f"eval score {score:.3f}", flush=True)
