"""The exit joins a non-daemon Timer whose callback starts the next one with no condition: the join never ends.
`python exit_timers.py`. Its twins: exit_timers_stop.py, exit_timers_daemon.py."""

import threading

from _at_exit import preempted_after

INTERVAL_S = 0.5


def flush():
    threading.Timer(INTERVAL_S, flush).start()  # HANG-HERE


if __name__ == "__main__":
    preempted_after(lambda: threading.Timer(INTERVAL_S, flush).start())
