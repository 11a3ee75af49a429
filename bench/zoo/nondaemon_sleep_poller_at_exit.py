"""A non-daemon heartbeat thread checks a stop flag every second; training raises, nothing sets the flag, no exit.

report: https://github.com/Lightning-AI/pytorch-lightning/issues/19203
also: https://github.com/wandb/wandb/issues/3864
saw: the process "hangs forever after the exception" until killed; py-spy shows main in threading._shutdown and a background thread sleeping in a loop.
mechanism: the interpreter joins every non-daemon thread at exit; the heartbeat loops `while not stop.is_set(): time.sleep(1)` and only the training code, now gone, would have set the flag.
expect: hung code.deadlock
accept: code.busy_loop
"""
import threading
import time

from _zoo import ready

stop = threading.Event()


def heartbeat():
    while not stop.is_set():
        time.sleep(1.0)  # HANG-HERE


if __name__ == "__main__":
    threading.Thread(target=heartbeat, name="heartbeat").start()
    print("epoch 0", flush=True)
    ready()
    raise RuntimeError("training failed")
