"""Twin of exit_timers.py: the callback re-arms only until a deadline (no I/O on the way), so the exit's join ends by
itself. `python exit_timers_stop.py SECONDS`."""

import sys
import threading
import time

from _at_exit import preempted_after

INTERVAL_S = 0.5
until = time.monotonic() + float(sys.argv[1])


def flush():
    if time.monotonic() < until:
        threading.Timer(INTERVAL_S, flush).start()


if __name__ == "__main__":
    preempted_after(lambda: threading.Timer(INTERVAL_S, flush).start())
