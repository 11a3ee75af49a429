"""A multiprocessing.Queue whose listener process drains it slowly: at exit the feeder thread is joined until it is flushed.

report: https://github.com/siliconcompiler/siliconcompiler/pull/5246
saw: with the listener still reading, the feeder thread's last writes go through and the interpreter exits.
mechanism: healthy: the listener process (not a daemon, so exit does not terminate it first) reads a record at a time, sleeping between them for a bounded time; at exit the interpreter joins it and the queue's feeder, which end once the listener has read the rest. (As a daemon, exit terminates the listener first and the feeder's join never returns: that is the hang.)
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def listener(q, pause):
    while q.get() is not None:
        time.sleep(pause)


if __name__ == "__main__":
    q = mp.Queue()
    p = mp.Process(target=listener, args=(q, seconds(20) / 400))  # not a daemon: exit waits for it
    p.start()
    for i in range(400):
        q.put(f"log record {i} " + "x" * 2000)
    q.put(None)
    print("done; exiting", flush=True)
    ready()  # the finalizer joins the feeder while the listener drains the pipe
