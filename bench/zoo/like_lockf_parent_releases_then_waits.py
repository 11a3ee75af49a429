"""A parent holds a POSIX record lock (fcntl.lockf) while it writes a cache for a while, then releases it and waits for the child that needs it.

report: https://github.com/fujibee/agmsg/issues/821
saw: a process blocked in fcntl(F_SETLKW) on a file lock while the process that holds it works.
mechanism: healthy: the child waits for the lock while the parent computes with it held; the parent releases it, the child takes it and exits, and the parent's wait ends.
expect: healthy
"""
import fcntl
import os
import subprocess
import sys
import tempfile
import time

from _zoo import ready, seconds

CHILD = "import fcntl, sys\nf = open(sys.argv[1], 'a')\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint('child has the cache')"

if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "cache.lock")
    f = open(path, "a")
    fcntl.lockf(f, fcntl.LOCK_EX)
    child = subprocess.Popen([sys.executable, "-c", CHILD, path])
    ready()
    end = time.monotonic() + seconds(40)
    while time.monotonic() < end:
        sum(range(10000))
    fcntl.lockf(f, fcntl.LOCK_UN)
    child.wait(timeout=60)
    print("cache built", flush=True)
