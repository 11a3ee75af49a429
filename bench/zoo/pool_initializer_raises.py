"""A fork Pool whose initializer raises: each worker dies before its first task, the pool starts another that runs
the initializer again, for ever, and map() never returns while the output fills with the same traceback.

report: https://github.com/python/cpython/issues/87472
saw: "Error in multiprocessing.Pool's initializer doesn't stop execution": the initializer's exception printed by
every new worker, again and again, and the program never ends
mechanism: multiprocessing's worker runs `initializer(*initargs)` before it takes a task; an exception ends the
worker, and the pool's worker handler replaces every worker that exits, with no limit and no error to the caller.
Here the initializer reads its config dict as an object: an AttributeError, the same in every worker.
expect: hung child.wait
output: file
"""
import json
import multiprocessing as mp
import os
import tempfile

from _zoo import ready

VOCAB_PATH = os.path.join(tempfile.mkdtemp(prefix="zoo-vocab-"), "vocab.json")
VOCAB = {}


def load_vocab(cfg):
    with open(cfg.vocab_path) as fh:  # a dict has no attribute vocab_path: the same error in every worker
        VOCAB.update(json.load(fh))


def tokenize(line):
    return [VOCAB.get(w, 0) for w in line.split()]


if __name__ == "__main__":
    with open(VOCAB_PATH, "w") as out:
        json.dump({"a": 1, "b": 2}, out)
    with mp.get_context("fork").Pool(2, initializer=load_vocab, initargs=({"vocab_path": VOCAB_PATH},)) as pool:
        ready()
        print(sum(map(len, pool.map(tokenize, ["a b", "c d e"] * 50))), flush=True)  # HANG-HERE
