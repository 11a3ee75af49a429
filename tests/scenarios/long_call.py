"""Steps, then one long call that holds the GIL (sum over a huge range runs in C, as a big sort, a
catastrophic regex or a tokenizer call do), then more steps: healthy, never hung."""

import sys

from _ready import ready

n = int(sys.argv[1]) if len(sys.argv) > 1 else 6 * 10**8
print("step 1/3", flush=True)
print("step 2/3", flush=True)
ready()
total = sum(range(n))  # LONG-CALL
print(f"step 3/3 ({total % 7})", flush=True)
