"""A trainer that, after its steps, waits on a socket of its own that has no peer (any process may send or connect
to it) for the report of an evaluator child. KIND (argv[2]): ``udp`` (recvfrom() on a UDP socket) or ``listener``
(accept() of a multiprocessing Listener, a unix socket). MODE (argv[1]):

- ``late``: the child polls for the file GO (argv[3]), asleep between checks (at most 60 s), then reports: exit 0;
- ``dead``: the child exits at once without reporting; nothing else lives that could: it never ends."""

import multiprocessing as mp
import os
import socket
import sys
import time
from multiprocessing.connection import Client, Listener


def evaluator(mode: str, kind: str, go: str, address: object) -> None:
    if mode == "dead":
        return
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.2)
    if kind == "udp":
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"eval 0.93", address)
    else:
        with Client(address) as c:
            c.send_bytes(b"eval 0.93")


def main() -> None:
    mode, kind = sys.argv[1], sys.argv[2]
    go = sys.argv[3] if len(sys.argv) > 3 else ""
    if kind == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        address = s.getsockname()
    else:
        listener = Listener(family="AF_UNIX")
        address = listener.address
    for step in range(5):
        print(f"step {step}", flush=True)
        time.sleep(0.3)
    child = mp.get_context("fork").Process(target=evaluator, args=(mode, kind, go, address))
    child.start()
    if kind == "udp":
        report, _ = s.recvfrom(100)  # UDP-HERE
    else:
        with listener.accept() as conn:  # LISTENER-HERE
            report = conn.recv_bytes()
    print(report.decode(), flush=True)
    child.join()
    print("done", flush=True)


if __name__ == "__main__":
    main()
