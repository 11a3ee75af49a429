"""Scenario helper: a job whose steps end, then SIGTERM's handler calls sys.exit() (zulip#20338, ZeroNet#1882): it only
raises SystemExit, and the interpreter's exit still joins every non-daemon thread, the timers `start` left included."""

import os
import signal
import sys
import time
from collections.abc import Callable


def _stop(signum, frame):
    sys.exit(0)


def preempted_after(start: Callable[[], None]) -> None:
    signal.signal(signal.SIGTERM, _stop)
    for step in range(5):
        print(f"step {step}", flush=True)
        time.sleep(0.05)
    start()
    print("preempted: SIGTERM", flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(3600)  # not reached: the handler's SystemExit ends main here
