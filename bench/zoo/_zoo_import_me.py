"""The module import_time_pool.py imports: a pool runs at its top level (what datasets#7756 did)."""
import multiprocessing

from _zoo import ready


class Row:
    def __init__(self, x):
        self.x = x


def tokenize(x):
    return Row(x)


ready()
ROWS = multiprocessing.get_context("fork").Pool(2).map(tokenize, range(4))  # HANG-HERE
