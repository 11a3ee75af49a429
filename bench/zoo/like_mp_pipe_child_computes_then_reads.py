"""The same duplex pipe: the parent's large send waits while the child computes on its first job, then reads.

report: https://github.com/mdavis-xyz/lambda_multiprocessing/issues/17
saw: a send that waits on a full pipe is a hang only if the other side will never read it.
mechanism: healthy: the child computes (at full CPU) before it reads the next job; the parent's send_bytes waits on
the full socket the while, then returns; the child sends a small result.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds

SIZE = 8 * 1024 * 1024


def child(conn, s):
    conn.recv_bytes()  # job 1
    end, n = time.monotonic() + s, 0
    while time.monotonic() < end:  # job 1's work, before the next job is read
        n += sum(i * i for i in range(1000))
    conn.recv_bytes()  # job 2
    conn.send_bytes(str(n).encode())


if __name__ == "__main__":
    parent, theirs = mp.Pipe()
    mp.get_context("fork").Process(target=child, args=(theirs, seconds(40)), name="pool-child").start()
    theirs.close()
    parent.send_bytes(b"x" * 1024)
    ready()
    parent.send_bytes(b"y" * SIZE)  # waits while the child computes
    print(len(parent.recv_bytes()), flush=True)
