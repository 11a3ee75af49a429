"""The main thread waits on a threading.Condition for a flag its one notifier thread sets: that thread raises before it
notifies, and dies. `python condition_notifier_died.py hang`; `python condition_notifier_died.py SECONDS`: the notifier
works SECONDS, sets the flag and notifies, and the job ends."""

import sys
import threading
import time

cond = threading.Condition()
ready = []


def notifier(arg: str) -> None:
    if arg == "hang":
        raise RuntimeError("the shard list is empty")  # dies before it notifies
    time.sleep(float(arg))
    with cond:
        ready.append(True)
        cond.notify_all()


threading.Thread(target=notifier, args=(sys.argv[1],), name="notifier").start()
with cond:
    cond.wait_for(lambda: ready)  # HANG-HERE
print("done", flush=True)
