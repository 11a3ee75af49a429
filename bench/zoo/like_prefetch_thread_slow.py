"""A prefetch thread that is slow to read its next frame, and then delivers it.

report: https://github.com/RadarML/red-rover/issues/23
saw: the consumer waits only as long as the prefetch thread lives and works.
mechanism: healthy: the consumer's queue.get() has no timeout, but the prefetch thread, alive, reads a slow frame (64 KiB at a time, from a disk that delivers 128 KiB/s) and puts it.
expect: healthy
"""
import os
import queue
import tempfile
import threading
import time

from _zoo import ready, seconds


def frames(n, slow):
    for i in range(n):
        if i == 3:
            with tempfile.TemporaryFile() as f:
                f.write(os.urandom(1 << 20))
                deadline = time.monotonic() + slow
                while time.monotonic() < deadline:
                    f.seek(0)
                    while f.read(1 << 16) and time.monotonic() < deadline:
                        time.sleep(0.5)  # a frame from a slow disk
        yield i


def prefetch(it, q):
    for item in it:
        q.put(item)
    q.put(None)


if __name__ == "__main__":
    q = queue.Queue(maxsize=8)
    threading.Thread(target=prefetch, args=(frames(6, seconds(40)), q), daemon=True, name="prefetch").start()
    ready()
    while (item := q.get()) is not None:
        print(f"frame {item}", flush=True)
