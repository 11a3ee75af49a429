"""A parent gives its child a pseudo-terminal (as pexpect and pty.spawn do) and waits for it without serving the
pty's master, which it alone holds. `out`: the child's output fills the pty (about 4 KiB) and its write blocks; `ask`:
the child asks for a password on the pty. Either way each waits for the other. `python pty_child_unanswered.py MODE
hang`; `python pty_child_unanswered.py MODE SECONDS`: a thread of the parent serves the master after SECONDS (reads
the output, answers the question), and the job ends."""

import os
import pty
import subprocess
import sys
import threading
import time

CHILD = {
    "out": "for i in range(100000): print('line', i, 'x' * 60)",
    "ask": "s = input('Password: ')\nprint('got', len(s))",
}


def serve(master: int, seconds: float) -> None:
    time.sleep(seconds)
    os.write(master, b"hunter2\n")
    try:
        while os.read(master, 65536):
            pass
    except OSError:  # EIO: the child closed its side
        pass


if __name__ == "__main__":
    mode, arg = sys.argv[1], sys.argv[2]
    master, slave = pty.openpty()
    child = subprocess.Popen([sys.executable, "-c", CHILD[mode]], stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    print("child started", child.pid, flush=True)
    if arg != "hang":
        threading.Thread(target=serve, args=(master, float(arg)), daemon=True).start()
    child.wait()  # HANG-HERE
    print("done", child.returncode, flush=True)
