"""A fork Pool whose initializer fails the same way for several seconds (a file another step writes then), then passes:
the workers that die are replaced, hundreds of them, the later ones take tasks, and map() returns.

report: https://github.com/python/cpython/issues/87472
saw: a pool's initializer error printed again and again; here it stops once what the initializer needs is there.
mechanism: healthy: the pool replaces each worker its initializer ended; once the file exists every new worker passes
its initializer and runs tasks (each slow, and each worker retired after one: maxtasksperchild=1), and map returns.
expect: healthy
"""
import multiprocessing as mp
import os
import tempfile
import threading
import time

from _zoo import ready, seconds

VOCAB = os.path.join(tempfile.mkdtemp(prefix="zoo-vocab-"), "vocab.json")
TASKS = 6


def load_vocab():
    with open(VOCAB) as f:  # FileNotFoundError until the writer below has made it
        return f.read()


def tokenize(args):
    i, s = args
    deadline = time.monotonic() + s
    while time.monotonic() < deadline:
        time.sleep(0.5)
    return i


def write_vocab():
    time.sleep(seconds(20))  # looks are taken while every worker still dies with FileNotFoundError
    with open(VOCAB, "w") as f:
        f.write("{}")


if __name__ == "__main__":
    threading.Thread(target=write_vocab, daemon=True).start()
    with mp.get_context("fork").Pool(2, initializer=load_vocab, maxtasksperchild=1) as pool:
        ready()
        print(pool.map(tokenize, [(i, seconds(40) * 2 / TASKS) for i in range(TASKS)], chunksize=1), flush=True)
    os.unlink(VOCAB)
    os.rmdir(os.path.dirname(VOCAB))
