"""The same two FileLocks on one path: the download threads poll while the trainer writes its index under the lock for a while, then it lets go.

report: https://github.com/tox-dev/filelock/issues/315
saw: the download threads wait on the cache lock with no timeout while the process itself holds it; here the holder's section ends.
mechanism: healthy: main holds the cache's FileLock while it builds the shard index (~25 s, asleep in pieces, as a slow listing of an object store), without waiting for the downloads inside the lock. The download threads' second FileLock objects poll (LOCK_NB every 50 ms) against the process's own hold; main releases it, the downloads take the lock one by one, and main collects their results outside the lock.
expect: healthy
"""
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from _zoo import ready, seconds
from filelock import FileLock


def download_shard(cache_dir, name):  # a library helper: it guards the cache with its own lock object
    with FileLock(os.path.join(cache_dir, ".cache.lock")):
        path = os.path.join(cache_dir, name)
        with open(path, "wb") as f:
            f.write(os.urandom(1 << 16))
        return path


if __name__ == "__main__":
    cache_dir = tempfile.mkdtemp(prefix="zoo-cache-")
    pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="download")
    futures = []
    with FileLock(os.path.join(cache_dir, ".cache.lock")):  # the trainer prepares the cache under the lock
        futures = [pool.submit(download_shard, cache_dir, f"shard-{i}.bin") for i in range(4)]
        ready()
        deadline = time.monotonic() + seconds(25)  # list the bucket and write the index: slow
        while time.monotonic() < deadline:
            time.sleep(0.5)
        with open(os.path.join(cache_dir, "index.json"), "w") as f:
            f.write('{"shards": 4}')
    paths = [fut.result() for fut in futures]  # outside the lock
    print("cache ready:", len(paths), "shards", flush=True)
