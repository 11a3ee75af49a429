"""A job seen from the kernel's side. argv[1]:
- "start": never prints, never steps: a thread waits on an event nobody will set and main joins it (hung at once);
- "after": steps 6 times (hangwatch.beat), then the same hang;
- "compute S": silent for S seconds while it computes (a loop walking its data), then exits 0;
- "download S": silent for S seconds while it reads bytes from a local server that sends a little at a time;
- "sleep S": silent and still for S seconds (one time.sleep), then exits 0."""

import socket
import sys
import threading
import time

import hangwatch


def never_set():
    ev = threading.Event()
    t = threading.Thread(target=ev.wait, name="waiter")
    t.start()
    t.join()  # HANG-HERE


def compute(seconds):
    end, total, i = time.monotonic() + seconds, 0, 0
    while time.monotonic() < end:
        total += i * i % 7
        i += 1


def download(seconds):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve():
        conn, _ = server.accept()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            conn.sendall(b"x" * 4096)
            time.sleep(0.2)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    got = 0
    with socket.create_connection(server.getsockname(), timeout=30) as c:
        while chunk := c.recv(65536):
            got += len(chunk)
    return got


if __name__ == "__main__":
    mode = sys.argv[1]
    seconds = float(sys.argv[2]) if sys.argv[2:] else 0.0
    if mode == "after":
        for step in range(6):
            time.sleep(0.2)
            hangwatch.beat(step)
    if mode in ("start", "after"):
        never_set()
    elif mode == "compute":
        compute(seconds)
    elif mode == "download":
        download(seconds)
    elif mode == "sleep":
        time.sleep(seconds)
    print("done", flush=True)
