"""The log thread holds the stats lock while it waits for the next record; the trainer needs that lock to put one.

report: https://github.com/release-engineering/kobo/pull/257
also: https://github.com/texttheater/produce/issues/35
saw: a logging thread deadlocked on its own queue: "locks that are not reentrant" and a queue that blocks.
mechanism: a cycle through two resources: the log thread holds stats_lock and waits in queue.get(); main must take stats_lock before it puts a record.
expect: hung code.deadlock
"""
import queue
import threading

from _zoo import ready

stats_lock = threading.Lock()
records = queue.Queue()
totals = {"records": 0}


def log_thread(started):
    while True:
        with stats_lock:
            started.set()
            record = records.get()  # HANG-HERE
            totals["records"] += 1
            print(record, flush=True)


if __name__ == "__main__":
    started = threading.Event()
    threading.Thread(target=log_thread, args=(started,), daemon=True).start()
    started.wait(30)
    ready()
    with stats_lock:  # HANG-HERE
        records.put(f"step 1, {totals['records']} records so far")
