"""A fork Pool whose initializer raises: each worker dies before its first task, the pool starts another that runs
the initializer again, for ever, and map() never returns while the output fills with the same traceback.

report: https://github.com/python/cpython/issues/87472
saw: "Error in multiprocessing.Pool's initializer doesn't stop execution": the initializer's exception printed by
every new worker, again and again, and the program never ends
mechanism: multiprocessing's worker runs `initializer(*initargs)` before it takes a task; an exception ends the
worker, and the pool's worker handler replaces every worker that exits, with no limit and no error to the caller.
expect: hung child.wait
output: file
"""
import multiprocessing as mp

from _zoo import ready


def load_vocab():
    with open("/nonexistent/vocab.json") as f:  # the shard every worker needs, at a path that does not exist
        return f.read()


def tokenize(line):
    return len(line.split())


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2, initializer=load_vocab) as pool:
        ready()
        print(sum(pool.map(tokenize, ["a b", "c d e"] * 50)), flush=True)  # HANG-HERE
