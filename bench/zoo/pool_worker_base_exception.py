"""A Pool task that raises a BaseException (not an Exception): its worker dies, and Pool.map waits forever.

report: https://github.com/python/cpython/pull/101081
saw: "raising a BaseException in a worker pool causes us not to put the result in the queue and subsequently for the whole process to hang".
mechanism: the pool's worker catches Exception only; a BaseException (a library's own Stop or Abort class) ends the worker process without a result; the pool starts a replacement but never fails the lost task.
expect: hung child.lost_work
accept: child.wait
"""
import multiprocessing as mp
import time

from _zoo import ready


class Abort(BaseException):
    """A library's signal to stop, derived from BaseException so that `except Exception` lets it through."""


def decode(i):
    time.sleep(1.0)  # decoding a clip
    if i == 2:
        raise Abort("corrupt clip 2")
    return i


if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        ready()
        print(pool.map(decode, range(4)), flush=True)  # HANG-HERE
