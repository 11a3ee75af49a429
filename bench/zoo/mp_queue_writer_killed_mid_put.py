"""A worker killed in the middle of a large Queue.put: the consumer's get(timeout=1.0) blocks for ever.

report: https://github.com/birdnet-team/birdnet/issues/83
saw: "`_recv_bytes()` is not bounded by anything. So a message truncated by a worker killed mid-`put` stops the consumer"; the dead worker "leaves `_wlock` held forever".
mechanism: the worker's feeder thread held the queue's write lock (a POSIX semaphore) while it wrote a 32 MiB message into the pipe; the worker was SIGKILLed (the OOM killer's way) with the message half written. The consumer's get() polled, saw data, and now waits in read() for the rest, past its timeout; the other worker's feeder waits for the dead worker's write lock, so no byte will ever come.
expect: hung code.deadlock
accept: child.lost_work, io.lock_wait, process.waits_on
"""
import multiprocessing as mp
import os
import queue
import signal
import time

from _zoo import ready


def worker(q, n):
    q.put(bytes(32 << 20) if n == 0 else b"embeddings of shard 1")  # its feeder thread writes it


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    a = ctx.Process(target=worker, args=(q, 0), name="worker-0")
    a.start()
    time.sleep(1.0)  # a's feeder has filled the pipe and blocks in write(), holding the write lock
    b = ctx.Process(target=worker, args=(q, 1), name="worker-1")
    b.start()  # its feeder waits for the write lock; at exit b joins its feeder
    os.kill(a.pid, signal.SIGKILL)
    a.join()
    print("worker-0 was killed", flush=True)
    ready()
    while True:
        try:
            item = q.get(timeout=1.0)  # HANG-HERE
            print(f"got {len(item)} bytes", flush=True)
        except queue.Empty:
            continue
