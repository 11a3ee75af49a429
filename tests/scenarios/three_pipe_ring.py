"""Three processes in a ring of pipes: each reads from the one before it and only then writes to the one after, and
the token that should start it was never written. `python three_pipe_ring.py hang`; `... SECONDS`: main writes the
token after SECONDS, and the ring goes round once."""

import os
import sys
import time

pipes = [os.pipe() for _ in range(3)]  # pipe i carries the token from process i to process i + 1


def stage(i: int) -> None:
    for j, (r, w) in enumerate(pipes):  # keep only the read end from the one before, the write end to the next
        if j != (i - 1) % 3:
            os.close(r)
        if j != i:
            os.close(w)
    token = os.read(pipes[(i - 1) % 3][0], 1)
    os.write(pipes[i][1], token)
    os._exit(0)


kids = []
for i in (1, 2):
    pid = os.fork()
    if pid == 0:
        stage(i)
    kids.append(pid)
for fd in (pipes[0][0], pipes[1][0], pipes[1][1], pipes[2][1]):
    os.close(fd)
if sys.argv[1] != "hang":
    time.sleep(float(sys.argv[1]))
    os.write(pipes[0][1], b"t")
token = os.read(pipes[2][0], 1)  # HANG-HERE
for pid in kids:
    os.waitpid(pid, 0)
print("done", token, flush=True)
