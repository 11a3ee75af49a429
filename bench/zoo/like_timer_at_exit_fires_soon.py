"""The same non-daemon Timer at exit, due in under a minute: the exit waits for it, and it fires.

report: https://github.com/singer-io/tap-salesforce/pull/112
saw: a timer's thread holds the exit only until it fires.
mechanism: healthy: the Timer's thread waits on its event with a timeout of under a minute, fires (a last upload of
the metrics) and ends; the interpreter exits.
expect: healthy
"""
import threading

from _zoo import ready, seconds


def upload_metrics():
    print("metrics uploaded", flush=True)


if __name__ == "__main__":
    threading.Timer(seconds(40), upload_metrics).start()
    print("training done", flush=True)
    ready()
