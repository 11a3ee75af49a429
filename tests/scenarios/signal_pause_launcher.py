"""A launcher starts its worker, then waits in signal.pause() for the SIGCHLD of the worker's end. `python
signal_pause_launcher.py hang`: no handler is installed, so SIGCHLD (ignored by default) does not end the pause, and
the worker exits at once: nothing can end the wait but a signal that kills it. `python signal_pause_launcher.py
SECONDS`: a SIGCHLD handler is installed, the worker computes SECONDS and exits, the pause returns, and the job ends."""

import signal
import subprocess
import sys

work = "pass" if sys.argv[1] == "hang" else f"import time\nt = time.time() + {float(sys.argv[1])}\nwhile time.time() < t: pass"
if sys.argv[1] != "hang":
    signal.signal(signal.SIGCHLD, lambda *_: None)
worker = subprocess.Popen([sys.executable, "-c", work])
signal.pause()  # HANG-HERE
print("worker exited", worker.wait(), flush=True)
print("done", flush=True)
