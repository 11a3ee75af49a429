"""A lock that no running thread will release, held where no stack shows it. `python lock_kept_by_a_generator.py
hang`: a generator suspended at a `yield` inside `with lock:` holds the lock while no thread runs it, and the same
thread then takes the lock. `python lock_kept_by_a_generator.py native`: a native (pthread) mutex, not re-entrant,
locked twice by the same thread through ctypes. `python lock_kept_by_a_generator.py SECONDS [native]`: a thread lets
it go after SECONDS (closes the generator, whose `with` then releases the lock; or unlocks the mutex: from another
thread, which POSIX leaves undefined for a default mutex and glibc allows), and the job ends."""

import ctypes
import sys
import threading
import time

NATIVE = "native" in sys.argv[1:]
lock = threading.Lock()
libc = ctypes.CDLL(None)
mutex = ctypes.create_string_buffer(64)  # larger than a pthread_mutex_t; zeroed: a default mutex


def rows():  # a generator
    with lock:
        yield 1
        yield 2


if NATIVE:
    libc.pthread_mutex_init(mutex, None)
    libc.pthread_mutex_lock(mutex)
else:
    it = rows()
    print("first row", next(it), flush=True)
if sys.argv[1] not in ("hang", "native"):

    def let_go() -> None:
        time.sleep(float(sys.argv[1]))
        libc.pthread_mutex_unlock(mutex) if NATIVE else it.close()

    threading.Thread(target=let_go, name="closer").start()
print("taking the lock again", flush=True)
if NATIVE:
    libc.pthread_mutex_lock(mutex)  # HANG-NATIVE
else:
    with lock:  # HANG-HERE
        pass
print("done", flush=True)
