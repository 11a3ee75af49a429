"""A pool's parent sends its next large job down a duplex multiprocessing.Pipe while the child sends back the
last job's large result on the same pipe: both sends block, each on a buffer only the other would drain.

report: https://github.com/mdavis-xyz/lambda_multiprocessing/issues/17
saw: "Parent and child both hang": job 2 fills the pipe's buffer while job 1's result is sent back on it.
mechanism: multiprocessing.Pipe() is a socketpair; each side's send_bytes blocks in sendall once the other side's
receive buffer is full, and neither reads until its own send returns: a cycle of two sockets.
expect: hung process.waits_on
accept: code.deadlock, io.network_wait
"""
import multiprocessing as mp

from _zoo import ready

SIZE = 8 * 1024 * 1024  # far past a socket's buffer


def child(conn):
    job = conn.recv_bytes()  # job 1
    conn.send_bytes(job * (SIZE // len(job)))  # a large result, while the parent sends job 2
    conn.recv_bytes()


if __name__ == "__main__":
    parent, theirs = mp.Pipe()
    mp.get_context("fork").Process(target=child, args=(theirs,), name="pool-child").start()
    theirs.close()
    parent.send_bytes(b"x" * 1024)  # job 1: small, it fits
    ready()
    parent.send_bytes(b"y" * SIZE)  # HANG-HERE: job 2 before job 1's result is read
    print(len(parent.recv_bytes()), flush=True)
