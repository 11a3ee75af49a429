"""A launcher starts its worker, then waits in signal.pause() for the SIGCHLD of its end, with no handler installed.

report: https://github.com/python/cpython/issues/100557
saw: "pause(2) only returns control if a signal is delivered which is not ignored by the process" (strace: SIGCHLD arrives, `pause(` goes on).
mechanism: SIGCHLD's default action is to ignore it, so its arrival does not end pause(); the worker exits and nothing else can send a signal the launcher handles: only a signal that kills it would end the wait.
expect: hung process.waits_on
"""
import signal
import subprocess
import sys

from _zoo import ready

if __name__ == "__main__":
    worker = subprocess.Popen([sys.executable, "-c", "print('worker: 3 shards written', flush=True)"])
    ready()
    signal.pause()  # HANG-HERE
    print("worker exited", worker.wait(), flush=True)
