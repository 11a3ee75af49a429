"""A trainer and its metrics helper each wait for the other to speak first on their socket: both wait forever.

report: https://github.com/initc3/HoneyBadgerMPC/pull/148
also: https://github.com/python/cpython/issues/86679
saw: IPC over sockets deadlocked: "sockets are not draining or something and deadlocks anyway".
mechanism: a protocol mismatch: the helper waits for a request before it sends its hello, the trainer waits for the hello before it sends a request; each recv waits on a socket only the other can write.
expect: hung process.waits_on
accept: io.network_wait, code.deadlock
"""
import multiprocessing as mp
import socket

from _zoo import ready


def metrics_helper(sock, other):
    other.close()  # the trainer's end is the trainer's alone
    request = sock.recv(1024)  # HANG-HERE
    sock.sendall(b"hello " + request)


if __name__ == "__main__":
    mine, theirs = socket.socketpair()
    helper = mp.get_context("fork").Process(target=metrics_helper, args=(theirs, mine))
    helper.start()
    theirs.close()
    ready()
    hello = mine.recv(1024)  # HANG-HERE
    mine.sendall(b"log step 1")
