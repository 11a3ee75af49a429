"""A lock no thread will release, waited for inside the signal.alarm timeout idiom (a SIGALRM handler that raises).
`python alarm_timeout_around_a_lock.py SECONDS KIND`: the alarm rings after SECONDS and the wait raises; the job skips
the item and ends. KIND `again`: main takes a threading.Lock it already holds; `fork`: a child forked while a thread
held a lock takes it (fork copied it held, without its holder). `python alarm_timeout_around_a_lock.py hang KIND`: the
same wait with no alarm and no handler."""

import contextlib
import os
import signal
import sys
import threading
import time


class Timeout(Exception):
    pass


@contextlib.contextmanager
def timeout(seconds: str):  # a context manager
    def ring(*_: object) -> None:
        raise Timeout(f"no answer in {seconds} s")

    if seconds != "hang":  # (no handler either: nothing but the lock's holder could end the wait)
        signal.signal(signal.SIGALRM, ring)
        signal.alarm(int(seconds))
    try:
        yield
    finally:
        signal.alarm(0)


def take(lock: threading.Lock) -> None:
    try:
        with timeout(sys.argv[1]):
            lock.acquire()  # HANG-HERE
    except Timeout as e:
        print("skipped:", e, flush=True)


lock = threading.Lock()
if sys.argv[2] == "again":
    lock.acquire()
    take(lock)
else:

    held = threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            time.sleep(2)

    threading.Thread(target=hold, daemon=True).start()
    held.wait(timeout=30)  # (the fork copies the lock held)
    pid = os.fork()
    if pid == 0:
        take(lock)
        os._exit(0)
    os.waitpid(pid, 0)
print("done", flush=True)
