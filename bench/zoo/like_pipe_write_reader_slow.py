"""A parent writes a child's start-up data into a pipe; the child reads it slowly, in pieces.

report: https://github.com/python/cpython/issues/118981
saw: a write to a full pipe waits; it is a hang only if no one will read.
mechanism: healthy: the child reads 64 KB a second (it parses as it reads) until it has the whole megabyte; the parent's write returns, and the child exits 0.
expect: healthy
"""
import os
import subprocess
import sys

from _zoo import ready, seconds

READER = """
import os, sys, time
fd, pause = int(sys.argv[1]), float(sys.argv[2])
got = 0
while got < (1 << 20):
    chunk = os.read(fd, 65536)
    if not chunk:
        break
    got += len(chunk)
    time.sleep(pause)
print("child read", got, flush=True)
"""

if __name__ == "__main__":
    r, w = os.pipe()
    pause = seconds(20) / 16
    child = subprocess.Popen([sys.executable, "-c", READER, str(r), str(pause)], pass_fds=(r,))
    os.close(r)
    ready()
    os.write(w, b"x" * (1 << 20))
    os.close(w)
    child.wait(timeout=120)
    print("sent", flush=True)
