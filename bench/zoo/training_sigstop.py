"""A training job suspended (Ctrl-Z, kill -STOP) and forgotten: it holds everything and makes no progress.

report: https://github.com/tensorflow/models/issues/892
also: https://github.com/apple/turicreate/issues/1169
saw: training suspended with Ctrl+Z kept its GPU memory; the eval job then ran out of memory.
mechanism: a stopped process makes no progress and uses no CPU; from outside it looks exactly like a hang.
expect: stopped process.stopped
"""
import os
import signal
import time

from _zoo import ready

if __name__ == "__main__":
    for step in range(100):
        print(f"step {step}", flush=True)
        time.sleep(0.2)
        if step == 5:
            ready()
            os.kill(os.getpid(), signal.SIGSTOP)  # HANG-HERE
