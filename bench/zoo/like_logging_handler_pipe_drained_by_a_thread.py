"""A trainer's log goes through a pipe that a thread of its own drains: every log call returns.

report: https://github.com/volcengine/OpenViking/issues/2752
saw: a log call waiting on the handler's lock is a hang only if the lock's holder never gets to write.
mechanism: healthy: the loader thread logs into a pipe that a drain thread reads after it loads its sink for a while
(asleep in pieces), so the loader's write blocks for that while, holding the handler's lock, and main's log call waits
on it; then the drain reads, the write ends and main's call returns.
expect: healthy
"""
import logging
import os
import threading
import time

from _zoo import ready, seconds

if __name__ == "__main__":
    r, w = os.pipe()
    log = logging.getLogger("data")
    log.addHandler(logging.StreamHandler(os.fdopen(w, "w", buffering=1)))
    log.setLevel(logging.INFO)

    def drain():
        for _ in range(int(seconds(20))):
            time.sleep(1)  # opening its sink
        while os.read(r, 65536):
            pass

    def load_shards():
        for i in range(20000):
            log.info("shard %d loaded %s", i, "." * 100)

    threading.Thread(target=drain, daemon=True).start()
    loader = threading.Thread(target=load_shards, name="loader")
    loader.start()
    time.sleep(0.5)
    ready()
    log.info("training starts")
    loader.join()
