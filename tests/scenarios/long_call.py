"""Steps, then one long call that holds the GIL (sum over a huge range runs in C, as a big sort, a
catastrophic regex or a tokenizer call do), then more steps: healthy, never hung.
argv[1]: how long the call takes, in seconds (calibrated on this machine: Python builds differ 2x in
speed), or `forever` (a call that outlives any test); `looped`: that call once per turn of a `while` loop in a
function, whose locals stay while it runs."""

import sys
import time

from _ready import ready

arg = sys.argv[1] if len(sys.argv) > 1 else "6"
if arg in ("forever", "looped"):
    n = 10**12
else:  # by this process's CPU time, the fastest of three: on a loaded machine the wall clock runs slow while it is
    # measured, and the call then ended before a look (no look at all, in CI); its CPU time is the call's own
    took = []
    for _ in range(3):
        t0 = time.process_time()
        sum(range(2 * 10**7))
        took.append(time.process_time() - t0)
    n = int(2 * 10**7 * float(arg) / max(min(took), 1e-6))
print("step 1/3", flush=True)
print("step 2/3", flush=True)
ready()


def turns(n: int) -> int:
    i, total = 0, 0
    while i < 3:
        total += sum(range(n))  # LOOPED-CALL
        i += 1
    return total


total = turns(n) if arg == "looped" else sum(range(n))  # LONG-CALL
print(f"step 3/3 ({total % 7})", flush=True)
