"""The job sleeps in C on one timer (libc's sleep through ctypes, as a native helper or extension does).
`python native_long_sleep.py hang`: a day's timer (a back-off computed in the wrong unit). `python native_long_sleep.py
alarm`: the same day's sleep, bounded the usual way by signal.alarm(8), whose handler raises: the sleep ends, and the
job goes on. `python native_long_sleep.py SECONDS`: a sleep of SECONDS."""

import ctypes
import signal
import sys


class Late(Exception):
    pass


def _late(signum, frame):
    raise Late


print("step 0", flush=True)
libc = ctypes.CDLL(None)
if sys.argv[1] == "alarm":
    signal.signal(signal.SIGALRM, _late)
    signal.alarm(8)
try:
    libc.sleep(86400 if sys.argv[1] in ("hang", "alarm") else int(sys.argv[1]))  # HANG-HERE
except Late:
    print("woken by the alarm", flush=True)
print("done", flush=True)
