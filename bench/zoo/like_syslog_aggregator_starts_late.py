"""A training loop logs through SysLogHandler to a shipper thread that forwards to an aggregator over TCP; the
aggregator replays its journal (CPU) before it accepts, so the logging blocks meanwhile.

report: https://github.com/ansible/awx/pull/7292
saw: a send blocked on a full socket is a hang only if nothing will drain it.
mechanism: healthy: the aggregator thread computes, then accepts and drains; the loop goes on.
expect: healthy
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

TWIN = True
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
        log.info("step=%d loss=%.5f weights=%s", step, loss, blob)
    print(f"finished, final loss {loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
