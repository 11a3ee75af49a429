"""The same two threads on one HDF5-style file: main waits for the library's lock (holding cached_property's) while the prefetcher's long read holds it, then goes on.

report: https://github.com/h5py/h5py/issues/2064
saw: main's first `images.size` stalls behind a prefetcher that holds the library's global lock through a long read; no cycle.
mechanism: healthy: main takes cached_property's class-wide lock and waits for phil, held by the prefetch thread through one long batch read (~25 s of slow decompression, asleep in pieces). The prefetcher opens no fresh Dataset under phil; it releases phil, main computes size and finishes, and the prefetcher's next lookup finds the class lock free.
expect: healthy
"""
import functools
import math
import threading
import time

from _zoo import ready, seconds

phil = threading.RLock()  # the library's global lock, taken by every high-level call
H5S_NULL, H5S_SIMPLE = 0, 1


def with_phil(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with phil:
            return func(*args, **kwargs)
    return wrapper


class Dataset:
    def __init__(self, file, name, shape):
        self.file, self.name, self._shape = file, name, shape

    @functools.cached_property
    @with_phil
    def _extent_type(self):
        return H5S_NULL if self._shape is None else H5S_SIMPLE

    @property
    def _is_empty(self):
        return self._extent_type == H5S_NULL

    @property
    def size(self):
        return None if self._is_empty else math.prod(self._shape)

    @with_phil
    def read_batch(self, start, n, slow_s):
        deadline = time.monotonic() + slow_s  # H5Dread of badly chunked data, under phil
        while time.monotonic() < deadline:
            time.sleep(0.5)
        return [(self.name, i) for i in range(start, start + n)]


class File:
    SHAPES = (("images", (50000, 3, 64, 64)), ("labels", (50000,)))

    @with_phil
    def __getitem__(self, name):
        return Dataset(self, name, dict(self.SHAPES)[name])


def prefetch(f, reading, done):
    images = f["images"]
    with phil:  # one hold for the batch, as the loader's read_direct does
        reading.set()
        images.read_batch(0, 256, seconds(25))
    labels = f["labels"]  # after the read, outside phil
    if not labels._is_empty:
        done.set()


if __name__ == "__main__":
    f = File()
    images = f["images"]
    reading, done = threading.Event(), threading.Event()
    threading.Thread(target=prefetch, args=(f, reading, done), name="prefetch", daemon=True).start()
    reading.wait()  # the prefetcher is inside its read
    ready()
    print(f"epoch 0: {images.size} samples", flush=True)
    done.wait()
    print("done", flush=True)
