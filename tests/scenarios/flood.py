"""Writes N MiB of deterministic bytes to stdout: \\r redraws, escapes, invalid UTF-8, no newlines."""

import os
import random
import sys

mib = int(sys.argv[1])
rng = random.Random(1234)
alphabet = b"\r\n\x1b[2K\xff\xfe\xc3(abc 0123456789|/\t"
for _ in range(mib * 16):
    block = bytes(rng.choice(alphabet) for _ in range(256)) * 256  # 64 KiB
    view = memoryview(block)
    while view:
        view = view[os.write(1, view):]
