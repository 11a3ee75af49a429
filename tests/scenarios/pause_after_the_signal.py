"""A trainer forks a data server that says "shards ready" with SIGUSR1, then waits on a pipe for "start"
(gmr/rejected#89). `hang`: the signal comes while the trainer still builds its model; its handler runs then, and the
trainer's later signal.pause() waits for a signal already taken (the server signals once the trainer has checked, and
says so on a pipe: the order is the same on a busy machine). `twin SECONDS`: the server computes SECONDS first,
so the signal comes while the trainer is in pause()."""

import hashlib
import os
import signal
import sys
import time

from _ready import ready

shards = {"ready": False}


def on_ready(signum, frame):
    shards["ready"] = True


def server(cmd_r: int, seconds: float, checked: int | None, sent: int | None) -> None:
    h, end = b"x", time.monotonic() + seconds
    while time.monotonic() < end:  # prepares the shards
        h = hashlib.sha256(h).digest()
    if checked is not None and sent is not None:  # (hang: only once the trainer has checked, as on a busy machine)
        os.read(checked, 1)
        os.kill(os.getppid(), signal.SIGUSR1)
        os.write(sent, b"s")
        os.close(checked)
        os.close(sent)
    else:
        os.kill(os.getppid(), signal.SIGUSR1)
    cmd = os.read(cmd_r, 64)  # SERVER-READS
    os._exit(0 if cmd.startswith(b"start") else 1)


if __name__ == "__main__":
    twin = sys.argv[1] == "twin"
    signal.signal(signal.SIGUSR1, on_ready)
    cmd_r, cmd_w = os.pipe()
    (check_r, check_w), (sent_r, sent_w) = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(cmd_w)
        os.close(check_w)
        os.close(sent_r)
        server(cmd_r, float(sys.argv[2]) if twin else 0.0, None if twin else check_r, None if twin else sent_w)
    for fd in (cmd_r, check_r, sent_w):
        os.close(fd)
    if not shards["ready"]:  # checked once
        if twin:
            time.sleep(1.0)  # builds the model
        else:  # builds the model: the signal lands here (the server says when it has sent it)
            os.write(check_w, b"c")
            os.read(sent_r, 1)
        os.close(check_w)
        os.close(sent_r)
        ready()
        signal.pause()  # HANG-HERE
    os.write(cmd_w, b"start")
    os.waitpid(pid, 0)
    print("done", flush=True)
