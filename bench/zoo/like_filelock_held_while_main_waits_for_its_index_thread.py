"""The same two FileLocks on one path: main waits, inside its lock, for the thread that builds the index, while the download threads poll for the lock; the index is done, main lets go.

report: https://github.com/tox-dev/filelock/issues/315
saw: the download threads wait on the cache lock with no timeout while the process itself holds it; here the holder waits for a thread that works, and its section ends.
mechanism: healthy: main holds the cache's FileLock and waits for the future of an index thread that hashes the shard list at full CPU (~20 s). The download threads' second FileLock objects poll (LOCK_NB every 50 ms) against the process's own hold: main's wait looks like the hang's (a future, inside the lock), but the thread it waits for works, and once it returns main releases the lock and the downloads take it one by one.
expect: healthy
"""
import hashlib
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


def build_index(n_shards, until):  # hashes the shard list until done: CPU-bound, in its own thread
    digest = hashlib.sha256()
    rounds = 0
    while time.monotonic() < until:
        for i in range(n_shards):
            digest.update(f"shard-{i}.bin:{rounds}".encode())
        rounds += 1
    return {"shards": n_shards, "digest": digest.hexdigest(), "rounds": rounds}


if __name__ == "__main__":
    cache_dir = tempfile.mkdtemp(prefix="zoo-cache-")
    indexer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index")
    pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="download")
    with FileLock(os.path.join(cache_dir, ".cache.lock")):  # the trainer prepares the cache under the lock
        futures = [pool.submit(download_shard, cache_dir, f"shard-{i}.bin") for i in range(4)]
        ready()
        index = indexer.submit(build_index, 4, time.monotonic() + seconds(20)).result()
        with open(os.path.join(cache_dir, "index.json"), "w") as f:
            f.write(str(index))
    paths = [fut.result() for fut in futures]  # outside the lock
    print("cache ready:", len(paths), "shards", flush=True)
