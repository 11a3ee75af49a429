"""A job whose output lines are 64 KiB words with no space (a dumped blob, a base64 string): printed, then
silent for 6 s (a look reads and redacts the last 64 KiB of the output), then printed again. Healthy: exit 0."""

import sys
import time

WORD = "x" * 65536

for phase in (1, 2):
    for i in range(20):
        sys.stdout.write(f"phase {phase} line {i} {WORD}\n")
        sys.stdout.flush()
    if phase == 1:
        time.sleep(6)
print("done", flush=True)
