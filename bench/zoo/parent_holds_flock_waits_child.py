"""A parent takes a file lock, then runs a child that takes the same lock, and waits for it while it holds it.

report: https://github.com/GreptimeTeam/greptimedb/issues/7692
saw: "Parent acquires Lock A; parent spawns child and waits for it (while holding Lock A); child tries to acquire Lock A: DEADLOCK".
mechanism: a cycle through two resources: the parent waits in wait() for its child; the child waits in flock() for the lock the parent holds.
expect: hung io.lock_wait
accept: child.wait, process.waits_on, code.deadlock
"""
import fcntl
import os
import subprocess
import sys
import tempfile

from _zoo import ready

CHILD = """import fcntl, sys
with open(sys.argv[1], "w") as f:
    fcntl.flock(f, fcntl.LOCK_EX)  # the same lock: its holder is the parent
    print("child has the lock", flush=True)
"""

if __name__ == "__main__":
    path = os.path.join(tempfile.gettempdir(), "registry.lock")
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        child = subprocess.Popen([sys.executable, "-c", CHILD, path])
        ready()
        child.wait()  # HANG-HERE
