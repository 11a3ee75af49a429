"""A trainer that, after its steps, waits in recvfrom() on a UDP socket of its own (no peer: any process may send
to it) for the report of an evaluator child. MODE (argv[1]):

- ``late``: the child polls for the file GO (argv[2]), asleep between checks (at most 60 s), then sends: exit 0;
- ``dead``: the child exits at once without sending; nothing else lives that could: it never ends."""

import socket
import subprocess
import sys
import time

CHILD = {
    "late": (
        "import os, socket, sys, time\n"
        "deadline = time.monotonic() + 60\n"
        "while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:\n"
        "    time.sleep(0.2)\n"
        "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'eval 0.93', ('127.0.0.1', int(sys.argv[2])))\n"
    ),
    "dead": "import sys; sys.exit(1)",
}


def main() -> None:
    mode = sys.argv[1]
    go = sys.argv[2] if len(sys.argv) > 2 else ""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    for step in range(5):
        print(f"step {step}", flush=True)
        time.sleep(0.3)
    child = subprocess.Popen([sys.executable, "-c", CHILD[mode], go, str(s.getsockname()[1])])
    report, _ = s.recvfrom(100)  # HANG-HERE
    print(report.decode(), flush=True)
    child.wait()
    print("done", flush=True)


if __name__ == "__main__":
    main()
