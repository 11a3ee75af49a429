"""A wait with a timeout, retried in a loop whose only way out is that wait succeeding: it waits as if it had no
timeout. `python retried_wait.py SECONDS KIND`: what it waits for comes after SECONDS (a thread that sleeps, then puts,
sets or ends), and the job prints `done` and exits 0; `python retried_wait.py hang KIND`: nothing ever will (the thread
that was to put raised first, or waits on an event nobody sets). KIND `queue`: main retries `q.get(timeout=1)` (`while
True:`, `try:`, `except queue.Empty: continue`, then `break`); `join`: main retries `worker.join(0.5)` while
`worker.is_alive()`; `future`: main retries `future.result(timeout=1)` (`except TimeoutError: continue`)."""

import concurrent.futures
import queue
import sys
import threading
import time

seconds = None if sys.argv[1] == "hang" else float(sys.argv[1])
kind = sys.argv[2]
never = threading.Event()


def produce(q: queue.Queue) -> None:
    if seconds is None:
        raise RuntimeError("bad shard: nothing to put")  # (the thread ends; its traceback is in the output)
    time.sleep(seconds)
    q.put("batch")


def work() -> str:
    if seconds is None:
        never.wait()  # HANG-WORKER
    else:
        time.sleep(seconds)
    return "result"


if kind == "queue":
    q: queue.Queue = queue.Queue()
    threading.Thread(target=produce, args=(q,), daemon=True).start()
    while True:
        try:
            item = q.get(timeout=1)  # HANG-HERE
        except queue.Empty:
            continue
        break
elif kind == "join":
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.5)
elif kind == "future":
    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(work)
    while True:
        try:
            item = future.result(timeout=1)
            break
        except concurrent.futures.TimeoutError:
            continue
print("done", flush=True)
