"""A trainer holds its cache's FileLock while a download thread takes a second FileLock on the same path: the thread polls for ever, main waits for it.

report: https://github.com/tox-dev/filelock/issues/315
also: https://github.com/tox-dev/filelock/pull/481 (the fix detects the same-thread case only: its registry is thread-local)
saw: "Deadlock when a process tries to open and lock on the same file twice ... even when we just create one filelock, we don't know if any other code already created the filelock in the same process and we are within the filelock."
mechanism: flock(2) locks belong to an open file description, so a second FileLock object opens the lock file again and its LOCK_EX|LOCK_NB fails against the process's own first hold; filelock retries every 50 ms with no timeout. recent filelock (4.3.2 here) raises when the second acquire is in the same thread, but here it runs in a ThreadPoolExecutor worker (a library's download helper making its own FileLock), so it polls for ever while main, holding the first lock, waits for that download's future.
expect: hung code.deadlock
accept: io.lock_wait
"""
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready
from filelock import FileLock


def download_shard(cache_dir, name):  # a library helper: it guards the cache with its own lock object
    with FileLock(os.path.join(cache_dir, ".cache.lock")):  # HANG-HERE
        path = os.path.join(cache_dir, name)
        with open(path, "wb") as f:
            f.write(os.urandom(1 << 16))
        return path


if __name__ == "__main__":
    cache_dir = tempfile.mkdtemp(prefix="zoo-cache-")
    pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="download")
    with FileLock(os.path.join(cache_dir, ".cache.lock")):  # the trainer prepares the cache under the lock
        with open(os.path.join(cache_dir, "index.json"), "w") as f:
            f.write('{"shards": 4}')
        time.sleep(0.5)
        futures = [pool.submit(download_shard, cache_dir, f"shard-{i}.bin") for i in range(4)]
        ready()
        paths = [fut.result() for fut in futures]  # HANG-HERE
    print("cache ready:", len(paths), "shards", flush=True)
