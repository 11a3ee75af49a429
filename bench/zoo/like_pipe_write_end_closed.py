"""A parent reads a pipe to its end while a forked writer produces a slow report; it closed its own write end.

report: https://github.com/vstinner/python-ptrace/issues/43
saw: with close(errpipe_write) in the parent, the read returns once the child is done.
mechanism: healthy: the reader closed its copy of the write end; the child writes a line now and then for a while, then exits; the read sees the end of the data.
expect: healthy
"""
import os
import time

from _zoo import ready, seconds

if __name__ == "__main__":
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        deadline = time.monotonic() + seconds(30)
        while time.monotonic() < deadline:
            time.sleep(2)
            os.write(w, b"still checking\n")
        os._exit(0)
    os.close(w)
    ready()
    data = b""
    while chunk := os.read(r, 4096):
        data += chunk
    os.waitpid(pid, 0)
    print(len(data), flush=True)
