"""Steps every 0.2 s, then one long batch of 8 s of its own running time (a batch that waits on work that
stops when the machine stops: time while the process is stopped does not count), then steps again.
A pause of the whole machine in the middle of that batch makes it last longer on the wall clock only."""

import time

from _ready import ready

BATCH_S = 8.0


def long_batch():
    ran = 0.0
    while ran < BATCH_S:
        t = time.monotonic()
        time.sleep(0.05)
        ran += min(time.monotonic() - t, 0.06)  # a stop of the process does not advance the batch


if __name__ == "__main__":
    for step in range(20):
        print(f"step {step}", flush=True)
        time.sleep(0.2)
    ready()
    long_batch()
    for step in range(20, 30):
        print(f"step {step}", flush=True)
        time.sleep(0.2)
    print("done", flush=True)
