"""A code-evaluation sandbox runs a generated function under a timeout (a SIGALRM handler that raises, as human-eval
and `evaluate`'s code_eval do): the function spins in a loop whose condition cannot change, and the timeout ends it.
`python spin_under_alarm.py SECONDS`: the alarm comes after SECONDS, the sandbox records the timeout and the job
ends; `python spin_under_alarm.py hang`: the same loop with no timeout set."""

import signal
import sys


class TimedOut(Exception):
    pass


def raise_timeout(signum: int, frame: object) -> None:
    raise TimedOut


def generated(target: int) -> list[int]:
    batch: list[int] = []
    while len(batch) < target:  # HANG-HERE
        pass
    return batch


if __name__ == "__main__":
    if sys.argv[1] != "hang":
        signal.signal(signal.SIGALRM, raise_timeout)
        signal.setitimer(signal.ITIMER_REAL, float(sys.argv[1]))
    print("evaluating", flush=True)
    try:
        generated(10)
    except TimedOut:
        print("timed out: recorded as a failed sample", flush=True)
    print("done", flush=True)
