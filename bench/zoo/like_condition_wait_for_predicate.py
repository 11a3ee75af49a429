"""A thread notifies a Condition before the main thread waits, but main waits for a predicate, then for a long job.

report: https://github.com/chenshuo/muduo/issues/412
saw: the fix: wait in a loop on a predicate ("while (loop_ == NULL) cond_.wait()"), so a notify that came first is not lost.
mechanism: healthy: cond.wait_for(lambda: bool(started)) returns at once; main then waits, with no timeout, for an event the loop thread sets when its first job (a long computation) ends.
expect: healthy
"""
import queue
import threading
import time

from _zoo import ready, seconds

cond = threading.Condition()
tasks = queue.Queue()
started = []


def event_loop():
    with cond:
        started.append(True)
        cond.notify()
    while True:
        job = tasks.get()
        job()


def warm_up(done, s):
    deadline, n = time.monotonic() + s, 0
    while time.monotonic() < deadline:
        n += sum(i * i for i in range(20000))
    print(f"warm ({n % 97})", flush=True)
    done.set()


if __name__ == "__main__":
    threading.Thread(target=event_loop, daemon=True, name="loop").start()
    time.sleep(0.2)
    with cond:
        cond.wait_for(lambda: bool(started))
    done = threading.Event()
    tasks.put(lambda: warm_up(done, seconds(30)))
    ready()
    done.wait()
