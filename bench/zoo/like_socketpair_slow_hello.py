"""A trainer waits for its metrics helper's hello on their socket; the helper says it after it loads.

report: https://github.com/initc3/HoneyBadgerMPC/pull/148
saw: a recv that waits is a hang only if the other end will never write.
mechanism: healthy: the helper loads for a while (asleep in pieces), then sends its hello; the trainer's recv returns.
expect: healthy
"""
import multiprocessing as mp
import socket
import time

from _zoo import ready, seconds


def metrics_helper(sock, other):
    other.close()  # the trainer's end is the trainer's alone
    for _ in range(int(seconds(20))):
        time.sleep(1)  # loading its exporters
    sock.sendall(b"hello")
    sock.recv(1024)


if __name__ == "__main__":
    mine, theirs = socket.socketpair()
    helper = mp.get_context("fork").Process(target=metrics_helper, args=(theirs, mine))
    helper.start()
    theirs.close()
    ready()
    hello = mine.recv(1024)
    mine.sendall(b"log step 1")
    helper.join()
    print("metrics ready:", hello.decode(), flush=True)
