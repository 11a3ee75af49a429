"""A loop that spins and can never end: a batch is grown from a list past its end (the slice adds nothing),
so `len(batch)` never reaches the target, while an index keeps growing (it looks like a loop walking data).
HW_LOOP picks a twin, each spinning with the same shape but ended by another thread after HW_LOOP_S seconds:
`flag` (a counter spins until a thread sets a flag in a dict), `fills` (a thread fills the list).
"""

import os
import threading
import time

from _ready import ready


def build(idx, target):
    batch, i = [], 0
    ready()
    while len(batch) < target:  # HANG-HERE
        batch += idx[i:i + 1]
        i += 1
    return batch


def wait_flag(state):
    spins = 0
    ready()
    while not state["done"]:  # HANG-HERE:flag
        spins += 1
    return spins


def wait_filled(results, n):
    ready()
    while len(results) < n:  # HANG-HERE:fills
        pass
    return results


def later(seconds, fn):
    def run():
        time.sleep(seconds)
        fn()
    threading.Thread(target=run, daemon=True).start()


if __name__ == "__main__":
    mode, seconds = os.environ.get("HW_LOOP", "frozen"), float(os.environ.get("HW_LOOP_S", "40"))
    if mode == "flag":
        state = {"done": False}
        later(seconds, lambda: state.update(done=True))
        wait_flag(state)
    elif mode == "fills":
        results = []
        later(seconds, lambda: results.extend(range(4)))
        wait_filled(results, 4)
    else:
        build(list(range(10)), 32)
    print("done", flush=True)
