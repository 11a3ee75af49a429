"""A child that reads its stdin line by line to end of file, and the parent that waits for it. $HW_FEED=1: a thread of
the parent feeds it a line every 2 s for 20 s, then closes its stdin (healthy: the child's reads return bytes as it
waits, a fact the kernel shows); else nobody writes nor closes it, and the parent waits (a cycle: hung)."""

import os
import subprocess
import sys
import threading
import time

from _ready import ready

child = "import sys\nn = sum(1 for _ in sys.stdin)\nprint('child read', n, 'lines', flush=True)"
p = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE)


def feed() -> None:
    for i in range(10):
        time.sleep(2)
        p.stdin.write(b"record %d\n" % i)
        p.stdin.flush()
    p.stdin.close()


if os.environ.get("HW_FEED") == "1":
    threading.Thread(target=feed).start()
ready()
p.wait()  # HANG-HERE
print("done", flush=True)
