"""SIGTERM's handler cancels the re-arming Timer, then exits: the exit waits for the last timer, which ends.

report: https://github.com/zulip/zulip/pull/20338
saw: the fix: "With the lock in hand, cancel any outstanding timers ... Handle this case by timing out the thread join".
mechanism: healthy: the handler sets a stop flag and cancels the pending Timer; a callback already running sees the flag and does not re-arm; the exit joins threads that all end within a bounded time (the last one sleeps a while first).
expect: healthy
"""
import os
import signal
import sys
import threading
import time

from _zoo import ready, seconds

stopping = threading.Event()
pending = []


def flush_batch():
    time.sleep(seconds(20) if stopping.is_set() else 0.0)  # a last, long flush
    if not stopping.is_set():
        pending.append(threading.Timer(1.0, flush_batch))
        pending[-1].start()


def stop(signum, frame):
    stopping.set()
    for t in pending:
        t.cancel()
    last = threading.Thread(target=flush_batch)  # the final flush, joined at exit
    last.start()
    sys.exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, stop)
    pending.append(threading.Timer(1.0, flush_batch))
    pending[-1].start()
    time.sleep(0.5)
    print("preempted: SIGTERM", flush=True)
    ready()  # the handler's SystemExit ends main at the kill: the exit's join starts now
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(3600)  # not reached
