"""Trains, then writes a checkpoint slowly to (simulated) slow storage, printing nothing."""

import os
import sys
import time

for step in range(10):
    time.sleep(0.05)
    print(f"step {step}", flush=True)
path = sys.argv[1]
chunk = os.urandom(1 << 20)
with open(path, "wb") as f:
    for _ in range(60):  # 60 MiB at ~12 MiB/s: about 5 s without output
        f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
        time.sleep(0.08)
os.remove(path)
for step in range(10, 13):
    print(f"step {step}", flush=True)
