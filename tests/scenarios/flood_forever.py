"""Writes numbered 64 KiB blocks to stdout until killed, ignoring SIGTERM (so it dies by SIGKILL,
in the middle of a write)."""

import os
import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def block(i: int) -> bytes:
    head = b"\n#%08d\r\x1b[2K\xff" % i
    return (head + bytes(range(256)) * 256)[:65536]


i = 0
while True:
    view = memoryview(block(i))
    while view:
        view = view[os.write(1, view):]
    i += 1
    time.sleep(0.002)
