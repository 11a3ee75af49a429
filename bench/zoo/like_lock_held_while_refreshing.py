"""A worker thread holds the cache lock while it refreshes the cache for a while; main waits, then goes on.

report: https://github.com/Maluuba/nlg-eval/pull/25
saw: the fix: take the lock with `with`, so it is released however the holder ends.
mechanism: healthy: the holder is alive and busy (it sleeps between chunks of its refresh), and releases the lock when done.
expect: healthy
"""
import threading
import time

from _zoo import ready, seconds

cache_lock = threading.Lock()
holding = threading.Event()


def refresh_cache():
    with cache_lock:
        holding.set()
        time.sleep(seconds(20))  # the refresh


if __name__ == "__main__":
    t = threading.Thread(target=refresh_cache)
    t.start()
    holding.wait(30)
    ready()
    with cache_lock:
        print("cache ready", flush=True)
    t.join()
