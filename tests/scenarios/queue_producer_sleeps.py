"""The main thread waits on queue.get() for the one item its producer thread puts after a sleep: a back-off read in
the wrong unit (seconds where milliseconds were meant). `python queue_producer_sleeps.py hang`: the sleep is 100000 s,
past every bound of the job; `python queue_producer_sleeps.py SECONDS`: it is SECONDS, and the job ends."""

import queue
import sys
import threading
import time

q: queue.Queue[int] = queue.Queue()


def producer() -> None:
    time.sleep(100000 if sys.argv[1] == "hang" else float(sys.argv[1]))
    q.put(1)


threading.Thread(target=producer, name="producer", daemon=True).start()
print("got", q.get(), flush=True)  # HANG-HERE
print("done", flush=True)
