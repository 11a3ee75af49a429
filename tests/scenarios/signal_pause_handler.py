"""The main thread waits in signal.pause() for the SIGUSR1 a helper thread sends when its work is done: the helper
raises and dies first. A handler for SIGUSR1 is installed, so a process outside the job could still send one.
`python signal_pause_handler.py hang`; `python signal_pause_handler.py SECONDS`: the helper works SECONDS, then sends
it, and the job ends."""

import os
import signal
import sys
import threading
import time

got: list[int] = []
signal.signal(signal.SIGUSR1, lambda *_: got.append(1))


def helper(arg: str) -> None:
    if arg == "hang":
        raise RuntimeError("config missing")  # dies before it signals
    time.sleep(float(arg))
    os.kill(os.getpid(), signal.SIGUSR1)


threading.Thread(target=helper, args=(sys.argv[1],), name="helper").start()
while not got:
    signal.pause()  # HANG-HERE
print("done", flush=True)
