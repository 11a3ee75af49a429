"""A healthy job that logs a lot: 600 steps of a 4 KiB line each, 2.4 MiB in about 6 s. Exit 0."""

import sys
import time

for step in range(1, 601):
    sys.stdout.write(f"step {step}/600 loss={1.0 / step:.4f} {'y' * 4096}\n")
    sys.stdout.flush()
    time.sleep(0.01)
print("done", flush=True)
