"""A trainer's log goes through a pipe that only its main thread drains; main logs too, and waits on the handler.

report: https://github.com/volcengine/OpenViking/issues/2752
also: https://github.com/caproto/caproto/issues/240
saw: "logging.StreamHandler.emit() holds a thread lock across stream I/O": one thread's write blocks, every other
thread's log call then waits on the handler's lock forever, and the log goes silent.
mechanism: a data thread logs into a pipe whose only reader is the main thread; the pipe fills, so the thread blocks in
its write holding logging's handler lock (an RLock, taken inside logging, not the user's `with`); main logs a line
before it would drain the pipe and waits on that lock. Each waits on the other: the writer for a read only main can
do, main for a lock only the writer can release.
expect: hung code.deadlock
"""
import logging
import os
import threading
import time

from _zoo import ready

if __name__ == "__main__":
    r, w = os.pipe()
    log = logging.getLogger("data")
    log.addHandler(logging.StreamHandler(os.fdopen(w, "w", buffering=1)))
    log.setLevel(logging.INFO)

    def load_shards():
        for i in range(20000):
            log.info("shard %d loaded %s", i, "." * 100)  # HANG-HERE: the pipe is full

    loader = threading.Thread(target=load_shards, name="loader")
    loader.start()
    time.sleep(0.5)
    ready()
    log.info("training starts")  # HANG-HERE: the handler's lock, held by the loader
    while os.read(r, 65536):  # main drains the log pipe (never reached)
        pass
