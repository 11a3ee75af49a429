"""A job that hangs, and whose SIGTERM handler starts a helper (a last upload) and exits at once: the helper is
left in the job's session, its parent gone and reaped, and must be ended with the rest of the tree.

    python term_spawns.py PIDFILE
"""

import os
import signal
import subprocess
import sys
import threading


def on_term(signum, frame):
    helper = subprocess.Popen(["sleep", "1000"])  # the last upload, started on the way out
    with open(sys.argv[1], "w") as f:
        f.write(str(helper.pid))
    os._exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_term)
    print("step 1", flush=True)
    threading.Event().wait()  # HANG-HERE
