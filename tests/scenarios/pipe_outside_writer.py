"""The job reads a pipe whose write end is held by a helper that left its tree (double-forked into a session
of its own, as a daemonised `tar` or a launcher's helper does). HW_WRITER says what the helper does:
"blocked" (waits with no timeout and never writes: a hang), "work" (packs at full CPU for HW_WRITER_S seconds,
then writes: healthy), "sleep" (sleeps HW_WRITER_S seconds, then writes: healthy).
The helper's pid is written to $HW_TMP/writer.pid: it is outside the job, so the test ends it by that pid."""

import os
import threading
import time

from _ready import ready


def helper(w, mode, seconds):
    if mode == "blocked":
        threading.Event().wait()  # HANG-HERE:writer
    elif mode == "work":
        total, i, deadline = 0, 0, time.monotonic() + seconds
        while time.monotonic() < deadline:
            total += i * i
            i += 1
    else:
        time.sleep(seconds)
    os.write(w, b"shard packed\n")
    os._exit(0)


def read_manifest(r):
    ready()
    return os.read(r, 100)  # HANG-HERE


if __name__ == "__main__":
    mode, seconds = os.environ.get("HW_WRITER", "blocked"), float(os.environ.get("HW_WRITER_S", "10"))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(r)
            with open(os.path.join(os.environ["HW_TMP"], "writer.pid"), "w") as f:
                f.write(str(os.getpid()))
            helper(w, mode, seconds)
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(w)
    while not os.path.exists(os.path.join(os.environ["HW_TMP"], "writer.pid")):
        time.sleep(0.01)
    print("got", read_manifest(r), flush=True)
