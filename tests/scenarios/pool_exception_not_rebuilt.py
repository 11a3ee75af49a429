"""A Pool worker raises an exception whose class takes two arguments but passes one message on to Exception: pickle
rebuilds it in the main process as ShardError(message), which raises TypeError in the pool's result-handler thread; the
thread dies and map() waits for ever (CPython gh-79492, gh-103061).

`python pool_exception_not_rebuilt.py hang`: that class. `... twin`: the class passes both arguments on, so the
error comes back to map(), which raises it; the job catches it and ends with `done`.
"""

import multiprocessing as mp
import sys


class ShardError(Exception):
    def __init__(self, shard: int, reason: str) -> None:
        if sys.argv[1] == "twin":
            super().__init__(shard, reason)
        else:
            super().__init__(f"shard {shard}: {reason}")  # one argument: cannot be rebuilt from args


def load(i: int) -> int:
    if i == 3:
        raise ShardError(i, "truncated")
    return i


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        try:
            print(pool.map(load, range(8)))  # HANG-HERE
        except ShardError as e:
            print("bad shard", e.args, flush=True)
    print("done", flush=True)
