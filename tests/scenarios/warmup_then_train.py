"""Healthy: a long CPU warm-up with no output at all (building an index, say), then training steps."""

import sys
import time

warmup_s = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
t0 = time.monotonic()
acc = 0
while time.monotonic() - t0 < warmup_s:
    for k in range(10000):
        acc += k * k
for step in range(5):
    print(f"step {step}", flush=True)
    time.sleep(0.1)
