"""A function spins until a deadline, reading the clock in its loop's condition (a busy wait, as a poll without a
sleep does). argv[1]: `12`, the deadline is 12 s away (it ends: exit 0); `never`, its condition compares the clock
the wrong way round (`time.time() > start - 1` stays true for ever)."""

import sys
import time


def wait_for_deadline(arg: str) -> None:
    start = time.time()
    if arg == "never":
        while time.time() > start - 1:  # HANG-HERE
            pass
    while time.time() - start < float(arg):
        pass


for step in range(3):
    print(f"step {step}", flush=True)
    time.sleep(0.3)
wait_for_deadline(sys.argv[1])
print("done", flush=True)
