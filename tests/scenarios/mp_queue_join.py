"""A multiprocessing child puts a large result in a Queue; the parent joins before reading it."""

import multiprocessing as mp

from _ready import ready


def evaluate(q):
    q.put(b"x" * (4 * 1024 * 1024))


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=evaluate, args=(q,), name="evaluator")
    p.start()
    ready()
    p.join()  # HANG-HERE
    print(len(q.get()))
