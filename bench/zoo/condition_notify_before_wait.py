"""A thread notifies a Condition before the main thread waits on it: the wake-up is lost, and each waits on the other.

report: https://github.com/chenshuo/muduo/issues/412
also: https://github.com/isocpp/CppCoreGuidelines/issues/1616
saw: "if notify() is called before wait(), wait() never returns" (the loop thread started first and notified an empty room).
mechanism: Condition.notify() wakes only threads already waiting; main calls cond.wait() with no predicate and no timeout after the loop thread's notify; the loop thread, its setup done, waits on its task queue for work only main would put: a cycle through two resources between the two threads.
expect: hung code.deadlock
"""
import queue
import threading
import time

from _zoo import ready

cond = threading.Condition()
tasks = queue.Queue()


def event_loop():
    with cond:
        cond.notify()  # nobody waits yet: lost
    while True:
        job = tasks.get()
        job()


if __name__ == "__main__":
    threading.Thread(target=event_loop, daemon=True, name="loop").start()
    time.sleep(0.2)  # main is slow to get here: the notify came first
    ready()
    with cond:
        cond.wait()  # HANG-HERE
    tasks.put(lambda: print("started", flush=True))
