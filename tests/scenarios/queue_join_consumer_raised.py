"""queue.Queue.join() while its one consumer thread died on an exception before task_done (Python prints the thread's
traceback): join never returns. `python queue_join_consumer_raised.py hang`; `... SECONDS`: the consumer handles
every item, the last after SECONDS, and the job ends."""

import queue
import sys
import threading
import time

q: queue.Queue[int] = queue.Queue()
slow = None if sys.argv[1] == "hang" else float(sys.argv[1])


def consume() -> None:
    while True:
        item = q.get()
        if slow is None and item == 3:
            # task_done below never runs for this item
            raise ValueError(f"bad item {item}")  # RAISES-HERE
        time.sleep((slow or 0) / 5)
        q.task_done()


if __name__ == "__main__":
    threading.Thread(target=consume, name="consumer", daemon=True).start()
    for i in range(5):
        q.put(i)
    print("queued", flush=True)
    q.join()  # HANG-HERE
    print("done", flush=True)
