"""A native child (sort) fed through its stdin, whose output the parent reads without closing that stdin: sort
prints nothing before end of file, the parent holds the write end and waits for sort's output (awestruct#136).
$HW_CLOSE=1: the twin, which computes for $HW_WORK_S seconds (sort waits meanwhile), then closes stdin and reads."""

import os
import subprocess
import time

from _ready import ready

words = b"\n".join(b"token%d" % (i * 7919 % 5000) for i in range(5000)) + b"\n"
p = subprocess.Popen(["sort", "-u"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
p.stdin.write(words)
p.stdin.flush()
ready()
if os.environ.get("HW_CLOSE") == "1":
    end = time.monotonic() + float(os.environ.get("HW_WORK_S", "12"))
    n = 0
    while time.monotonic() < end:  # the vocabulary's statistics, meanwhile: sort waits for the rest of its input
        n += sum(range(1000))
    p.stdin.close()
vocab = p.stdout.read()  # HANG-HERE
print(len(vocab.splitlines()), "tokens", flush=True)
p.wait(timeout=30)
