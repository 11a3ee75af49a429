"""Main holds a multiprocessing lock and waits on its two children's pipes; each child first takes that lock. A
threading.Timer of main re-arms itself every 30 s (a heartbeat) and releases nothing: its function starts the next
Timer, so it is no way out of the cycle (lock_released_by_a_timer.py: a Timer that releases the lock once). `twin`:
a one-shot Timer releases the lock after 600 s beside the heartbeat (two Timers, one re-arming chain: one fires once).
The heartbeat is defined here, in the main script, where the capture reads the user's source for it."""

import sys
import threading

from lock_released_by_a_timer import hold_and_wait


def beat() -> None:
    t = threading.Timer(30, beat)
    t.daemon = True
    t.start()


if __name__ == "__main__":
    beat()
    hold_and_wait(600 if sys.argv[1:] == ["twin"] else None)
