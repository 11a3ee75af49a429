"""A launcher that starts a native worker and waits on an Event for it to finish.

    python signalled_launcher.py sigchld|usr1|none [SECONDS]

``sigchld``: a SIGCHLD handler sets the Event (the worker's exit sends it); ``usr1``: the worker sends SIGUSR1 when
done, and that handler sets it. Healthy: the worker runs SECONDS (default 12), then the launcher goes on, exit 0.
``none``: no handler: nothing can ever set the Event, whatever the worker does (hang, at the marked line).
"""

import signal
import subprocess
import sys
import threading

mode = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 12.0
done = threading.Event()
if mode == "sigchld":
    signal.signal(signal.SIGCHLD, lambda *_: done.set())
elif mode == "usr1":
    signal.signal(signal.SIGUSR1, lambda *_: done.set())
# the worker: a native tool (a converter, a compiled trainer); in usr1 mode it tells its parent when it is done
script = f"sleep {seconds:g}" + ("; kill -USR1 $PPID; sleep 0.5" if mode == "usr1" else "")
child = subprocess.Popen(["sh", "-c", script])
print("step 1/2: worker started", flush=True)
done.wait()  # HANG-HERE
print(f"step 2/2: worker exited {child.wait()}", flush=True)
