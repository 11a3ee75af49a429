"""Waits that never end by themselves, inside the signal.alarm timeout idiom (a SIGALRM handler that raises).
`python alarm_timeout_around_a_wait.py SECONDS KIND`: the alarm rings after SECONDS, the wait raises, and the job
skips and ends. KIND `loop`: `while True: time.sleep(1)`; `pipe`: a read of the stdout of a child in `sleep infinity`;
`child`: a wait for a child in `sleep infinity`. `python alarm_timeout_around_a_wait.py hang KIND`: the same wait
with no alarm and no handler."""

import signal
import subprocess
import sys
import time


class Timeout(Exception):
    pass


def ring(*_: object) -> None:
    raise Timeout("no answer in time")


kind = sys.argv[2]
child = subprocess.Popen(["sleep", "infinity"], stdout=subprocess.PIPE) if kind != "loop" else None
if sys.argv[1] != "hang":
    signal.signal(signal.SIGALRM, ring)
    signal.alarm(int(sys.argv[1]))
try:
    if child is None:
        while True:
            time.sleep(1)  # HANG-HERE
    elif kind == "pipe":
        child.stdout.read()  # HANG-PIPE
    else:
        child.wait()  # HANG-CHILD
except Timeout as e:
    print("skipped:", e, flush=True)
if child is not None:
    child.kill()
    child.wait(timeout=10)
print("done", flush=True)
