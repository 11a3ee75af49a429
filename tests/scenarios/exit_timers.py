"""SIGTERM's handler calls sys.exit(), and the exit joins a non-daemon Timer whose callback starts the next one.
`forever`: the callback re-arms with no condition, so the exit's join never ends (zulip#20338, ZeroNet#1882).
`writes`: the twin, a flush at exit that re-arms while it has batches left: each round appends a batch to a file
(bytes move), and after ROUNDS rounds it stops and the process exits 0.
`python exit_timers.py MODE [ROUNDS] [FILE]`."""

import os
import signal
import sys
import threading
import time

INTERVAL_S = 0.5
left = [0]


def flush_forever():
    threading.Timer(INTERVAL_S, flush_forever).start()  # HANG-HERE


def flush_batches(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for i in range(4):  # one batch: a few records, each written through
            os.write(fd, f"record {left[0]}.{i}\n".encode())
    finally:
        os.close(fd)
    left[0] -= 1
    if left[0] > 0:
        threading.Timer(INTERVAL_S, flush_batches, (path,)).start()


def stop(signum, frame):
    sys.exit(0)  # only raises SystemExit: the exit still joins every non-daemon thread


if __name__ == "__main__":
    mode = sys.argv[1]
    signal.signal(signal.SIGTERM, stop)
    for step in range(5):
        print(f"step {step}", flush=True)
        time.sleep(0.05)
    if mode == "forever":
        threading.Timer(INTERVAL_S, flush_forever).start()
    else:
        left[0] = int(sys.argv[2])
        threading.Timer(INTERVAL_S, flush_batches, (sys.argv[3],)).start()
    print("preempted: SIGTERM", flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(3600)  # not reached: the handler's SystemExit ends main here
