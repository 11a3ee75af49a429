"""A parent writes a child's start-up data into a pipe; the child died before reading, and the parent kept the read end: the write blocks forever.

report: https://github.com/python/cpython/issues/118981
also: https://github.com/rwth-i6/returnn/issues/1514
saw: multiprocessing's spawn start hung in the parent's write of the preparation data after the child crashed at start.
mechanism: the parent never closed its copy of the child's read end; the child exits without reading; the pipe fills, and the only process that could read it is the writer itself, blocked in the write.
expect: hung process.waits_on
accept: code.deadlock
"""
import os
import subprocess
import sys

from _zoo import ready

if __name__ == "__main__":
    r, w = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"], pass_fds=(r,))  # fails at start
    child.wait()  # (the parent forgets to close r)
    ready()
    os.write(w, b"x" * (1 << 20))  # HANG-HERE
    print("sent", flush=True)
