"""The job forks a child that writes its result to a pipe and exits, then reads the pipe to its end; but it
kept its own copy of the write end open, so the end never comes: the only writer left is the reader itself.
With HW_CLOSE=1 the job closes its copy first (the fix): the read ends and the job exits."""

import os

from _ready import ready


def read_all(r):
    chunks = []
    while True:
        chunk = os.read(r, 4096)  # HANG-HERE
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        ready()


if __name__ == "__main__":
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, b"tokens: 4096\n")
        os._exit(0)
    os.waitpid(pid, 0)
    if os.environ.get("HW_CLOSE") == "1":
        os.close(w)
    print("read", len(read_all(r)), flush=True)
