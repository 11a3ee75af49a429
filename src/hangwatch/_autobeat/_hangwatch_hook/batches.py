"""The batch and sample indices each DataLoader worker holds, in a memory-mapped file per iterator (read by
hangwatch/capture/loader.py).

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from typing import Any

# One file per multiprocessing DataLoader iterator, ``<main pid>-<n>.dl`` beside the heartbeat slot, where heal is on
# (or samples an earlier heal left out stay out): a header, then one slot per worker saying which batch it works on now
# (its oldest batch not yet returned: a worker takes its batches in order), since when, and its first sample indices.
# The main process keeps them as it sends a batch and gets one back: heal hands a replaced worker's batches, those
# still queued for it included, to the fresh one, and only the main process knows them. It writes them to the file
# when it waits for a batch (heal's poll, every HEAL_POLL_S), not at every batch, and the header says the slots are
# current (LOADER_CURRENT) until the next batch moves: a look reads them only then, which is when heal can act (a
# main process that waits on a stuck worker). A slot's sequence number is odd while it is written and even after, so
# a reader never takes a torn slot. Where heal is off nothing is kept a batch: a look reads the batch a stuck worker
# holds from its own locals (capture/locals.py); a write at every batch cost 0.90 of the job (bench/samples.py).
LOADER_MAGIC = 0x314C5748  # "HWL1"
LOADER_HEADER = struct.Struct("<IIIi48s")  # magic, workers, iterable (0/1), flags, dataset class name
LOADER_SLOT = struct.Struct("<QIIqddI4x")  # sequence, worker pid, indices in the batch, batch, sent, since, kept
LOADER_INDICES = 64  # the first indices of a batch kept (int64 each); the count says how many it had
LOADER_SLOT_SIZE = LOADER_SLOT.size + 8 * LOADER_INDICES
LOADER_SUFFIX = ".dl"
LOADER_FLAGS_AT, LOADER_HEALABLE, LOADER_CURRENT = 12, 1, 2  # the header's fourth field: flags; 1: this iterator's
# workers can be healed; 2: the slots are current (written while the main process waits, no batch moved since)
_FLAGS = struct.Struct("<i")
# A slot and its first n indices in one pack (the same bytes as the slot, then n int64s): a write is two packs, the
# slot with its odd sequence number, then the even one.
_SLOT_WITH = [struct.Struct(f"{LOADER_SLOT.format}{n}q") for n in range(LOADER_INDICES + 1)]
_SEQ = struct.Struct("<Q")


def _pack_slot(mm: Any, off: int, seq: int, pid: int, batch: int, index: Any, sent: float, since: float) -> int:
    """Write one worker's slot at ``off``: odd sequence number first, even after; the new (even) number."""
    kind = type(index)
    ints: Any
    if kind is list or kind is tuple:
        ints = index
    elif index is None:
        ints = []
    elif hasattr(index, "tolist"):  # a tensor or an array of indices (a custom batch sampler's)
        ints = index.tolist()
        ints = ints if isinstance(ints, list) else [ints]
    elif isinstance(index, range):
        ints = list(index)
    else:
        ints = [index]
    n = len(ints)
    kept = ints if n <= LOADER_INDICES else ints[:LOADER_INDICES]
    seq += 1  # odd: being written
    try:
        _SLOT_WITH[len(kept)].pack_into(mm, off, seq, pid, n, batch, sent, since, len(kept), *kept)
    except (struct.error, TypeError):  # not sample numbers (keys of a custom sampler): only their count is kept
        LOADER_SLOT.pack_into(mm, off, seq, pid, n, batch, sent, since, 0)
    _SEQ.pack_into(mm, off, seq + 1)  # even: whole
    return seq + 1


class _LoaderTasks:
    """The batches outstanding at each worker of one DataLoader iterator, mirrored into its memory-mapped file."""

    count = 0  # iterators made in this process: each gets its own file

    def __init__(self, directory: str, it: Any) -> None:
        _LoaderTasks.count += 1
        self.path = os.path.join(directory, f"{os.getpid()}-{_LoaderTasks.count}{LOADER_SUFFIX}")
        self.workers = int(it._num_workers)
        self.queues: list[list[tuple[int, Any, float]]] = [[] for _ in range(self.workers)]
        self.seq = [0] * self.workers
        self.since = [0.0] * self.workers  # per worker: since when it works on the batch it holds (or has none)
        self.flags = 0  # the header's flags, as last written
        self.current = False  # the slots in the file are as the queues are (no batch moved since they were written)
        self.stale_by = [0] * self.workers  # per worker: the last epoch's batches still queued, while torch resets
        self.resetting = False  # torch's reset between two epochs is under way (persistent workers)
        self.skip: set[Any] = set()  # samples heal left out of this dataset: never sent again (shared, per dataset)
        self.retried: dict[int, int] = {}  # batch -> times heal handed it to a fresh worker, this epoch
        size = LOADER_HEADER.size + self.workers * LOADER_SLOT_SIZE
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.ftruncate(fd, size)
            self.mm = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        iterable = 1 if getattr(it, "_dataset_kind", 0) == 1 else 0  # torch's _DatasetKind.Iterable
        name = type(getattr(it, "_dataset", None)).__name__.encode()[:48]
        LOADER_HEADER.pack_into(self.mm, 0, LOADER_MAGIC, self.workers, iterable, 0, name)
        self.pids = [int(getattr(w, "pid", 0) or 0) for w in getattr(it, "_workers", [])][: self.workers]
        self.pids += [0] * (self.workers - len(self.pids))
        for w in range(self.workers):
            self._write(w)

    def _write(self, w: int) -> None:
        q = self.queues[w]
        batch, index, sent = q[0] if q else (-1, None, 0.0)
        off = LOADER_HEADER.size + w * LOADER_SLOT_SIZE
        self.seq[w] = _pack_slot(self.mm, off, self.seq[w], self.pids[w], batch, index, sent, self.since[w] or sent)

    def set_flags(self, flags: int) -> None:
        """The header's flags, written."""
        self.flags = flags
        _FLAGS.pack_into(self.mm, LOADER_FLAGS_AT, flags)

    def flush(self) -> None:
        """Every worker's slot written as the queues are now, and the header's word that they are current: the main
        process waits for a batch (heal's poll), which is when a look may read them."""
        for w in range(self.workers):
            self._write(w)
        self.current = True
        self.set_flags(self.flags | LOADER_CURRENT)

    def _moved(self) -> None:
        """A batch moved: the slots in the file are no longer current (one write, after a flush only)."""
        self.current = False
        self.set_flags(self.flags & ~LOADER_CURRENT)

    def begin_reset(self) -> None:
        """A new epoch of the same iterator (persistent workers) starts: torch first waits for the batches the
        workers still have of the last one (a loop that stopped early). They stay recorded until it is done."""
        self.stale_by = [len(q) for q in self.queues]
        self.resetting = True

    def end_reset(self) -> None:
        """torch's reset is done: the last epoch's batches are all back; the new epoch's stay."""
        now = time.time()  # (a slot written with no time is one nobody wrote since the file was made)
        for w, q in enumerate(self.queues):
            del q[: self.stale_by[w]]
            self.since[w] = now
        self.stale_by = [0] * self.workers
        self.resetting = False
        self.retried.clear()  # batch numbers start again at 0
        if self.current:
            self._moved()

    def sent(self, batch: int, index: Any, w: int) -> None:
        """Batch ``batch``, the sample indices ``index``, went to worker ``w``."""
        q = self.queues[w]
        now = time.time()
        q.append((batch, index, now))
        if len(q) == 1:
            self.since[w] = now
        if self.current:
            self._moved()

    def received(self, batch: int, w: int) -> None:
        """Batch ``batch`` came back from worker ``w``: it now works on its next one, since now."""
        q = self.queues[w]
        stale = self.stale_by[w]
        if not stale and q and q[0][0] == batch:  # the usual case: a worker returns its batches in order
            del q[0]
        else:
            for i in range(stale, len(q)):
                if q[i][0] == batch:
                    del q[i]
                    break
        self.since[w] = time.time()
        if self.current:
            self._moved()

    def done(self, w: int) -> None:
        """Worker ``w`` has no more data this epoch (an exhausted IterableDataset): what it was sent never comes."""
        del self.queues[w][self.stale_by[w] :]
        self.since[w] = time.time()
        if self.current:
            self._moved()

    def close(self) -> None:
        """The iterator's workers end: its file goes."""
        try:
            self.mm.close()
            os.unlink(self.path)
        except Exception:  # noqa: BLE001, S110 - at interpreter exit (from __del__) module globals may be gone
            pass


# What a record may raise, and nothing else is caught: torch's SIGCHLD handler raises its "worker killed" error in
# the main thread at any point, and it must reach the job as it would without hangwatch.
_RECORD_ERRORS: tuple[type[Exception], ...] = (
    struct.error,
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    AttributeError,
    OSError,
)


def _record_put(t: _LoaderTasks, queue: Any, w: int) -> None:
    """Index queue ``queue`` of worker ``w`` tells ``t`` what it is sent: ``(batch, sample indices)`` (its other
    messages, a resume or the end, are not batches). The queue reached its worker before: it never sees this."""
    put = queue.put

    def recorded(item: Any, *args: Any, **kwargs: Any) -> Any:
        if type(item) is tuple and len(item) == 2:
            try:
                t.sent(item[0], item[1], w)
            except _RECORD_ERRORS:
                pass
        return put(item, *args, **kwargs)

    queue.put = recorded


def _record_puts(t: _LoaderTasks, it: Any) -> None:
    """Each index queue of the iterator tells ``t`` what its worker is sent."""
    for w, queue in enumerate(it._index_queues[: t.workers]):
        _record_put(t, queue, w)
