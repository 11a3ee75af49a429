"""A parent takes a POSIX record lock (fcntl.lockf) on a cache file, then starts a child that takes it too, and waits.

report: https://github.com/fujibee/agmsg/issues/821
saw: a driver takes a lock, spawns a child and waits for it with no ceiling: the lock is held as long as the child lives (here the child needs the lock).
mechanism: POSIX record locks belong to a process and are not inherited across fork: the child blocks in F_SETLKW on the lock its parent holds, and the parent waits in wait() for the child.
expect: hung io.lock_wait
accept: child.wait, process.waits_on, code.deadlock
"""
import fcntl
import os
import subprocess
import sys
import tempfile

from _zoo import ready

CHILD = "import fcntl, sys\nf = open(sys.argv[1], 'a')\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint('child has the cache')"

if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "cache.lock")
    f = open(path, "a")
    fcntl.lockf(f, fcntl.LOCK_EX)
    child = subprocess.Popen([sys.executable, "-c", CHILD, path])
    ready()
    child.wait()  # HANG-HERE
    fcntl.lockf(f, fcntl.LOCK_UN)
