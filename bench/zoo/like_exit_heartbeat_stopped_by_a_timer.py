"""The heartbeat of nondaemon_sleep_poller_at_exit, on the same module-level threading event, which a timer thread sets.

report: https://github.com/Lightning-AI/pytorch-lightning/issues/19203
saw: the heartbeat holds the exit only when nothing will set its stop flag.
mechanism: healthy: the same `while not stop.is_set(): time.sleep(1.0)` loop at exit, on a flag its file binds only to `threading.Event()` (its process's own), but a `threading.Timer` of the same process (its upload's deadline) sets it: a thread asleep on a timer may set it when it wakes, so the loop has a way out.
expect: healthy
"""
import threading
import time

from _zoo import ready, seconds

stop = threading.Event()


def heartbeat():
    while not stop.is_set():  # the same loop as nondaemon_sleep_poller_at_exit's; the timer sets the event
        time.sleep(1.0)


if __name__ == "__main__":
    threading.Thread(target=heartbeat, name="heartbeat").start()
    threading.Timer(seconds(30), stop.set).start()  # one timed wait, then the event is set
    print("epoch 0", flush=True)
    ready()  # main returns: the exit joins the heartbeat and the timer until the timer fires
