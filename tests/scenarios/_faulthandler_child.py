"""The child of exit_timer.py: arms faulthandler's exit timer (argv[1] seconds), then deadlocks."""

import faulthandler
import sys
import threading

faulthandler.dump_traceback_later(float(sys.argv[1]), exit=True)
lock = threading.Lock()
lock.acquire()
lock.acquire()  # HANG-HERE
