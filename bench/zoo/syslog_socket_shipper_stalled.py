"""A training loop logs each step through SysLogHandler to a unix datagram socket read by a log-shipper thread that
forwards to an aggregator over TCP; the aggregator's port is listening, and nothing ever accepts: the shipper blocks on
its full connection, the datagram queue fills, and logger.info() blocks the training loop.

report: https://github.com/ansible/awx/pull/7292
also: https://github.com/ansible/awx/issues/8576
saw: "rsyslogd is no longer reading from the domain socket, and we're unable to write any more to it without blocking"
mechanism: main's send() waits for room in a datagram socket only its shipper thread reads; the shipper's sendall()
waits for room in a connection whose other end is in the accept queue of a listener the process holds and never
accepts: each thread that could end a wait is in such a wait.
expect: hung code.deadlock
accept: process.waits_on, io.network_wait
"""
import hashlib
import logging
import logging.handlers
import os
import socket
import threading
import time

from _zoo import ready as zoo_ready
from _zoo import seconds

TWIN = False
BUF = 256 * 1024


def ship(unix_path, aggregator_addr, bound):
    src = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    src.bind(unix_path)
    bound.set()
    dst = socket.socket()
    dst.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUF)
    dst.connect(aggregator_addr)
    while True:
        record = src.recv(65536)
        dst.sendall(record)            # shipper blocks here when dst is full


def aggregator(listener):
    h, deadline = b"j", time.monotonic() + seconds(18)
    while time.monotonic() < deadline:          # replay journal: pure CPU
        for _ in range(2000):
            h = hashlib.sha256(h).digest()
    conn, _ = listener.accept()
    while conn.recv(1 << 20):
        pass


def main():
    unix_path = f"\0devlog-{os.getpid()}"        # abstract unix socket, no file
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUF)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    if TWIN:
        threading.Thread(target=aggregator, args=(listener,), daemon=True,
                         name="aggregator").start()
    bound = threading.Event()
    threading.Thread(target=ship, args=(unix_path, listener.getsockname(), bound),
                     daemon=True, name="log-shipper").start()
    bound.wait()
    log = logging.getLogger("train")
    log.setLevel(logging.INFO)
    log.addHandler(logging.handlers.SysLogHandler(address=unix_path))
    print("training; step logs go to syslog", flush=True)
    loss, blob = 10.0, "w" * 900
    zoo_ready()
    for step in range(12000):
        loss *= 0.9995
        log.info("step=%d loss=%.5f weights=%s", step, loss, blob)  # HANG-HERE
    print(f"finished, final loss {loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
