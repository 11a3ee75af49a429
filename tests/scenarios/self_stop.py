"""Fast steps, then the job's process is stopped (SIGSTOP: a debugger, Ctrl-Z in the wrong shell, a
suspend that was never resumed); it runs again only when someone continues it."""

import os
import signal
import time

from _ready import ready

if __name__ == "__main__":
    for step in range(40):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    ready()
    os.kill(os.getpid(), signal.SIGSTOP)  # HANG-HERE
    print("continued", flush=True)
