"""Loads for a while printing nothing, then trains normally and exits 0."""

import time

time.sleep(3.0)
for step in range(20):
    time.sleep(0.1)
    print(f"step {step}", flush=True)
