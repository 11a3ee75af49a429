"""A parent holds a file lock while it prepares, then releases it and waits for a child that takes it and works a while.

report: https://github.com/GreptimeTeam/greptimedb/issues/7692
saw: the fix: the parent releases the lock before it waits for the child.
mechanism: healthy: the child waits for the lock a moment, gets it once the parent lets go, then computes for a bounded time under it; the parent's wait() returns when it exits.
expect: healthy
"""
import fcntl
import os
import subprocess
import sys
import tempfile
import time

from _zoo import ready, seconds

CHILD = """import fcntl, sys, time
with open(sys.argv[1], "w") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        sum(range(10000))
"""

if __name__ == "__main__":
    path = os.path.join(tempfile.gettempdir(), "registry.lock")
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        child = subprocess.Popen([sys.executable, "-c", CHILD, path, str(seconds(20))])
        time.sleep(1.0)
        fcntl.flock(lock, fcntl.LOCK_UN)
    ready()
    child.wait()
