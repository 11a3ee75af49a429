"""A native cat's output read a chunk at a time, with a pause between chunks: the parent reads, then waits.

report: https://github.com/localstack/localstack/pull/1101
saw: the fix: read the output (communicate) instead of wait() on a full pipe.
mechanism: healthy: the parent reads 64 KiB, then pauses for a bounded time, so the native cat blocks on the full pipe between reads; it always moves on, and wait() returns once it has written everything.
expect: healthy
"""
import os
import subprocess
import tempfile
import time

from _zoo import ready, seconds

if __name__ == "__main__":
    path = os.path.join(tempfile.gettempdir(), "file.txt")
    with open(path, "wb") as f:
        f.write(b"\0" * (1024 * 1024))
    p = subprocess.Popen(["cat", path], stdout=subprocess.PIPE)
    ready()
    while p.stdout.read(65536):
        time.sleep(seconds(20) / 16)
    p.wait()
