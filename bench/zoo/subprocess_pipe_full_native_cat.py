"""Popen('cat file', stdout=PIPE) then wait(): a native cat fills the pipe and blocks, the parent waits for it.

report: https://github.com/localstack/localstack/pull/1101
saw: `process = subprocess.Popen('cat file.txt', shell=True, ..., stdout=subprocess.PIPE); process.wait()  # hanging` for a 1 MB file.
mechanism: the native child (no Python stack to read) blocks in write() on a full 64 KiB pipe that the parent, in wait(), never reads; only the kernel's view shows it.
expect: hung child.wait
accept: process.waits_on
"""
import os
import subprocess
import tempfile

from _zoo import ready

if __name__ == "__main__":
    path = os.path.join(tempfile.gettempdir(), "file.txt")
    with open(path, "wb") as f:
        f.write(b"\0" * (1024 * 1024))
    p = subprocess.Popen(  # noqa: S602 - the report's own call
        f"cat {path}", shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    ready()
    p.wait()  # HANG-HERE
