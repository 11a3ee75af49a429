"""The main thread waits on queue.get() for what a fetcher thread puts after its native helper returns; the helper
(`cat` of a control FIFO) waits in open() for a writer that never comes: nothing in the job opens the FIFO, and a
process outside it still could (`echo go > FIFO`)."""

import os
import queue
import subprocess
import tempfile
import threading
import time

from _ready import ready

FIFO = os.path.join(tempfile.mkdtemp(), "control")
os.mkfifo(FIFO)
q: queue.Queue[bytes] = queue.Queue()


def fetch() -> None:
    q.put(subprocess.run(["cat", FIFO], capture_output=True, check=False).stdout)


threading.Thread(target=fetch, name="fetcher", daemon=True).start()
time.sleep(0.5)
ready()
print("got", q.get(), flush=True)  # HANG-HERE
