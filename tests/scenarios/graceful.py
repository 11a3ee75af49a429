"""Handles SIGTERM like a trainer that saves a checkpoint before exiting."""

import signal
import sys
import time

from _ready import ready


def save_and_exit(signum, frame):
    with open(sys.argv[1], "w") as f:
        f.write(f"saved on signal {signum}\n")
    sys.exit(0)


signal.signal(signal.SIGTERM, save_and_exit)
ready()
for step in range(100000):
    time.sleep(0.05)
    print(f"step {step}", flush=True)
