"""A worker thread raised while holding a lock it took without `with`: every later acquire waits forever.

report: https://github.com/Maluuba/nlg-eval/pull/25
saw: "module was hanging when exception occurred in one thread while others were waiting on lock".
mechanism: a threading.Lock has no owner to die with: the thread that acquired it raised before its release and ended, and nobody else will release it.
expect: hung code.deadlock
accept: io.lock_wait
"""
import threading

from _zoo import ready

cache_lock = threading.Lock()


def refresh_cache():
    cache_lock.acquire()
    raise ValueError("corrupt cache entry")  # the release below never runs
    cache_lock.release()


if __name__ == "__main__":
    t = threading.Thread(target=refresh_cache)
    t.start()
    t.join()
    ready()
    with cache_lock:  # HANG-HERE
        print("never", flush=True)
