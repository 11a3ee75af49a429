"""The log thread takes the stats lock only after a record arrives; the trainer waits while it writes slowly.

report: https://github.com/release-engineering/kobo/pull/257
saw: the fix: never hold the lock across the blocking get().
mechanism: healthy: the log thread waits in get() holding nothing, then holds the lock while it writes a slow record; main waits for the queue to drain.
expect: healthy
"""
import queue
import threading
import time

from _zoo import ready, seconds

stats_lock = threading.Lock()
records = queue.Queue()
totals = {"records": 0}


def log_thread():
    while True:
        record = records.get()
        with stats_lock:
            time.sleep(seconds(20))  # writing to a slow log store
            totals["records"] += 1
            print(record, flush=True)
        records.task_done()


if __name__ == "__main__":
    threading.Thread(target=log_thread, daemon=True).start()
    ready()
    with stats_lock:
        records.put(f"step 1, {totals['records']} records so far")
    records.join()
    print("logged", flush=True)
