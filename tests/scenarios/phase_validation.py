"""Beats every step, then runs a long validation declared with hangwatch.phase()."""

import time

import hangwatch

for step in range(10):
    time.sleep(0.05)
    hangwatch.beat(step)
with hangwatch.phase("validation", timeout=60):
    time.sleep(5.0)  # much longer than --min-stall, inside the declared phase
for step in range(10, 15):
    time.sleep(0.05)
    hangwatch.beat(step)
print("done", flush=True)
