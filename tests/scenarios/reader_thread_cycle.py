"""Main waits on a queue that a thread fills from a child: read over a socket (`socket-...`) or from the child's
standard output (`pipe-...`), as a decoder or a prefetcher does, or the child's exit status (`wait-...`, a job runner's
`proc.wait()`). argv[1]: `socket-12` (`pipe-12`, `wait-12`), the child computes 12 s then sends (the job ends, exit 0);
`socket-hang` (...), the child first reads its standard input, a pipe main never writes: main -> its queue -> the
thread -> the child -> its stdin -> main, a cycle."""

import queue
import subprocess
import sys
import threading
import time

how, _, arg = sys.argv[1].partition("-")
child_code = (
    "import os, sys, time\n"
    + ("sys.stdin.readline()\n" if arg == "hang" else f"t = time.time()\nwhile time.time() - t < {arg}: sum(range(9999))\n")
    + "os.write(int(sys.argv[1]), b'result\\n')\n"
)

if how == "socket":
    import socket

    mine, theirs = socket.socketpair()
    child = subprocess.Popen(
        [sys.executable, "-c", child_code, str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.PIPE
    )
    theirs.close()
    read = lambda: mine.recv(100)  # noqa: E731
elif how == "pipe":
    child = subprocess.Popen([sys.executable, "-c", child_code, "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    read = child.stdout.readline
else:
    child = subprocess.Popen([sys.executable, "-c", child_code, "1"], stdin=subprocess.PIPE)
    read = child.wait

results: queue.Queue = queue.Queue()
threading.Thread(target=lambda: results.put(read()), name="reader", daemon=True).start()
for step in range(3):
    print(f"step {step}", flush=True)
    time.sleep(0.3)
print(results.get(), flush=True)  # HANG-HERE
child.stdin.close()
child.wait()
print("done", flush=True)
