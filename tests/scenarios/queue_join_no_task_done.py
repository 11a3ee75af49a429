"""The main thread joins a queue.Queue whose one worker thread takes its item but never calls task_done() (the
worker's bug). `python queue_join_no_task_done.py hang`; `python queue_join_no_task_done.py SECONDS`: the worker
works SECONDS on its item, marks it done, and the job ends."""

import queue
import sys
import threading
import time

q: queue.Queue[float] = queue.Queue()


def worker(arg: str) -> None:
    while True:
        seconds = q.get()
        time.sleep(seconds)
        if arg != "hang":
            q.task_done()


threading.Thread(target=worker, args=(sys.argv[1],), name="worker", daemon=True).start()
q.put(0.1 if sys.argv[1] == "hang" else float(sys.argv[1]))
q.join()  # HANG-HERE
print("done", flush=True)
