"""Two threads read one HDF5-style file: functools.cached_property's lock (one per class, not per object) and the library's global lock are taken in opposite orders.

report: https://github.com/h5py/h5py/issues/2064
also: https://github.com/python/cpython/issues/87634 (the lock is class-wide; removed in 3.12); https://github.com/h5py/h5py/pull/2066 (the fix: a cached_property with no lock)
saw: "We use `h5py` to read from the same file with multiple threads. Occasionally deadlocks happen in `Dataset._extent_type` which is wrapped in two locks ... 1. the `h5py` `_phil` lock which is acquired with the `@with_phil` decorator 2. the `RLock` in `@functools.cached_property`".
mechanism: on Python <= 3.11 cached_property.__get__ computes under `self.lock`, an RLock of the descriptor, shared by every instance of the class. Main reads `images.size` (its first use): it takes the descriptor's lock, then _extent_type's @with_phil waits for phil. The prefetch thread holds phil through a batch read and then opens `f["labels"]`, a fresh Dataset object, whose _extent_type needs the descriptor's lock that main holds: a lock-order cycle between two threads, through a lock no user code names.
expect: hung code.deadlock
"""
import functools
import math
import threading
import time

from _zoo import ready

phil = threading.RLock()  # the library's global lock, taken by every high-level call
H5S_NULL, H5S_SIMPLE = 0, 1


def with_phil(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with phil:  # HANG-HERE
            return func(*args, **kwargs)
    return wrapper


class Dataset:
    def __init__(self, file, name, shape):
        self.file, self.name, self._shape = file, name, shape

    @functools.cached_property  # Python <= 3.11: computed under one RLock shared by all Datasets
    @with_phil
    def _extent_type(self):
        return H5S_NULL if self._shape is None else H5S_SIMPLE  # H5Sget_simple_extent_type

    @property
    def _is_empty(self):
        return self._extent_type == H5S_NULL  # HANG-HERE

    @property
    def size(self):
        return None if self._is_empty else math.prod(self._shape)

    @with_phil
    def read_batch(self, start, n):
        time.sleep(1.5)  # H5Dread of compressed chunks, under phil
        labels = self.file["labels"]  # a fresh Dataset object, as h5py returns on every lookup
        if labels._is_empty:
            return None
        return [(self.name, i) for i in range(start, start + n)]


class File:
    SHAPES = (("images", (50000, 3, 64, 64)), ("labels", (50000,)))

    @with_phil
    def __getitem__(self, name):
        return Dataset(self, name, dict(self.SHAPES)[name])


def prefetch(f, reading):
    images = f["images"]
    start = 0
    while True:
        with phil:  # one hold for the batch and its labels, as the loader's read_direct does
            reading.set()
            images.read_batch(start, 256)
        start += 256


if __name__ == "__main__":
    f = File()
    images = f["images"]  # opened once, at start
    reading = threading.Event()
    threading.Thread(target=prefetch, args=(f, reading), name="prefetch", daemon=True).start()
    reading.wait()  # the prefetcher is inside its first batch read
    ready()
    print(f"epoch 0: {images.size} samples", flush=True)  # first use of size: takes the class-wide lock
    print("done", flush=True)
