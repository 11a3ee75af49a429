"""Training ends, but the process does not: a non-daemon threading.Timer that refreshes a token in 24 hours holds the
interpreter's exit.

report: https://github.com/singer-io/tap-salesforce/pull/112
also: https://github.com/deepsourcelabs/beacon-py/issues/18
saw: "the reason these processes were hanging for 24 hours is because ... a new timer thread would begin which would
never be canceled".
mechanism: at exit Python joins every non-daemon thread; the Timer's thread waits on its event with a timeout of a
day, far past any bound: the job's last line is printed and it sits for 24 hours.
expect: hung code.deadlock
accept: process.waits_on, code.computing
"""
import threading

from _zoo import ready


def refresh_token():
    print("token refreshed", flush=True)


if __name__ == "__main__":
    threading.Timer(24 * 3600, refresh_token).start()  # (no stack shows this line: named at the Timer's run)
    print("training done", flush=True)
    ready()
