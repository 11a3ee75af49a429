"""Main waits on a condition its producer thread notifies once it has queued its three items; the queue holds one
and only main takes from it, after its wait: each thread waits on what the other does next. `python
condition_waits_on_its_own_full_queue.py hang`; `... SECONDS`: the queue holds ten, the producer takes SECONDS."""

import queue
import sys
import threading
import time

hang = sys.argv[1] == "hang"
q: queue.Queue[int] = queue.Queue(maxsize=1 if hang else 10)
cond = threading.Condition()
state = {"ready": False}


def produce() -> None:
    for i in range(3):
        q.put(i)
        time.sleep(0 if hang else float(sys.argv[1]) / 3)
    with cond:
        state["ready"] = True
        cond.notify_all()


if __name__ == "__main__":
    threading.Thread(target=produce, name="producer").start()
    print("started", flush=True)
    with cond:
        cond.wait_for(lambda: state["ready"])  # HANG-HERE
    print([q.get() for _ in range(3)], flush=True)
    print("done", flush=True)
