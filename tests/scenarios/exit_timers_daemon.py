"""Twin of exit_timers.py: a daemon heartbeat re-arms with no condition beside a one-shot non-daemon Timer due later;
the exit waits for that one only, and ends when it fires. `python exit_timers_daemon.py SECONDS`."""

import sys
import threading

from _at_exit import preempted_after

INTERVAL_S = 0.5


def beat():
    t = threading.Timer(INTERVAL_S, beat)
    t.daemon = True  # the exit does not wait for it
    t.start()


def start():
    beat()
    threading.Timer(float(sys.argv[1]), print, ("last upload done",), {"flush": True}).start()


if __name__ == "__main__":
    preempted_after(start)
