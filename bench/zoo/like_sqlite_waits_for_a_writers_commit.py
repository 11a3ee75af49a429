"""A checkpoint index waits, in SQLite's busy handler, for the metrics thread's open write transaction: it commits, the insert goes on.

report: https://github.com/digital-fabric/extralite/issues/54
saw: the report's hang is one thread holding a write transaction and waiting, with a busy timeout, on a second connection of its own; here the writer is another thread that commits.
mechanism: healthy: the index connection's busy handler sleeps and retries while the metrics thread, holding the write lock, inserts a batch of steps (asleep in pieces) and commits.
expect: healthy
"""
import os
import sqlite3
import tempfile
import threading
import time

from _zoo import ready, seconds


def log_metrics(db, started):
    metrics = sqlite3.connect(db)
    metrics.execute("INSERT INTO metrics VALUES (0, 1.0)")  # opens the write transaction
    started.set()
    deadline = time.monotonic() + seconds(12)
    step = 1
    while time.monotonic() < deadline:  # a batch of steps, then commit
        metrics.execute("INSERT INTO metrics VALUES (?, ?)", (step, 1.0 / step))
        step += 1
        time.sleep(0.5)
    metrics.commit()


if __name__ == "__main__":
    db = os.path.join(tempfile.mkdtemp(), "run.db")
    with sqlite3.connect(db) as c:
        c.executescript("CREATE TABLE metrics(step, loss); CREATE TABLE ckpt(step, path);")
    started = threading.Event()
    t = threading.Thread(target=log_metrics, args=(db, started), name="metrics-writer")
    t.start()
    started.wait()
    index = sqlite3.connect(db, timeout=24 * 3600)
    ready()
    index.execute("INSERT INTO ckpt VALUES (?, ?)", (100, "ckpt-100.pt"))  # waits for the writer's commit
    index.commit()
    t.join()
    print("done", flush=True)
