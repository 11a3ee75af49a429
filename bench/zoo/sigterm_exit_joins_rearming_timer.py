"""SIGTERM's handler calls sys.exit(), and the exit waits for a non-daemon Timer that re-arms itself forever.

report: https://github.com/zulip/zulip/pull/20338
also: https://github.com/HelloZeroNet/ZeroNet/pull/1882
saw: "Python's behaviour on sys.exit is to wait for all non-daemon threads to exit ... a non-daemon Timer thread ... sets up another 5-second Timer, a process which repeats"; "Zeronet just hangs on receiving SIGTERM from systemd".
mechanism: a loop with no way out across threads: the interpreter's exit joins the Timer thread; each Timer's callback starts the next one before it ends, so a non-daemon timer is always waiting out its interval.
expect: hung code.deadlock
accept: code.busy_loop, unknown
"""
import os
import signal
import sys
import threading
import time

from _zoo import ready


def flush_batch():
    threading.Timer(1.0, flush_batch).start()  # HANG-HERE


def stop(signum, frame):
    sys.exit(0)  # only raises SystemExit: the exit still joins every non-daemon thread


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, stop)
    threading.Timer(1.0, flush_batch).start()
    time.sleep(0.5)
    print("preempted: SIGTERM", flush=True)
    ready()  # the handler's SystemExit ends main at the kill: the exit's join starts now
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(3600)  # not reached
