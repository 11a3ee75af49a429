"""The same launcher, with a SIGCHLD handler installed before its pause(): the worker's end wakes it.

report: https://github.com/python/cpython/issues/100557
saw: "if we install a signal handler, SIGCHLD will make pause(2) return".
mechanism: healthy: the launcher pauses while its worker computes, the worker's exit sends SIGCHLD, the handler runs and pause() returns; the launcher reaps the worker and ends.
expect: healthy
"""
import signal
import subprocess
import sys

from _zoo import ready, seconds

if __name__ == "__main__":
    signal.signal(signal.SIGCHLD, lambda *_: None)
    worker = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds(30)}); print('worker: done')"])
    ready()
    signal.pause()
    print("worker exited", worker.wait(), flush=True)
