"""The batch and sample indices each DataLoader worker holds, in a memory-mapped file per iterator (read by
hangwatch/capture/loader.py).

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import functools
import mmap
import os
import struct
import time
from typing import Any

from .slot import _Beats

# One file per multiprocessing DataLoader iterator, ``<main pid>-<n>.dl`` beside the heartbeat slot: a header, then
# one slot per worker saying which batch it works on now (its oldest batch not yet returned: a worker takes its
# batches in order), since when, and its first sample indices. Never a system call (the file is memory-mapped). A
# writer bumps the slot's sequence number to odd before it writes and to even after, so a reader never takes a torn
# slot. Each slot has one writer after the main process made the file:
# - the worker itself (``_WorkerSlot``) as it takes a batch from its index queue and as it asks for the next one:
#   the main process, which sets the pace of a loader-bound job, pays nothing per batch (bench/samples.py);
# - the main process, as it sends a batch and gets one back, while heal is on: heal hands a replaced worker's
#   batches, those still queued for it included, to the fresh one, and only the main process knows them.
LOADER_MAGIC = 0x314C5748  # "HWL1"
LOADER_HEADER = struct.Struct("<IIIi48s")  # magic, workers, iterable (0/1), flags, dataset class name
LOADER_SLOT = struct.Struct("<QIIqddI4x")  # sequence, worker pid, indices in the batch, batch, sent, since, kept
LOADER_INDICES = 64  # the first indices of a batch kept (int64 each); the count says how many it had
LOADER_SLOT_SIZE = LOADER_SLOT.size + 8 * LOADER_INDICES
LOADER_SUFFIX = ".dl"
LOADER_FLAGS_AT, LOADER_HEALABLE = 12, 1  # the header's fourth field: flags; 1: this iterator's workers can be healed
LOADER_BY_WORKERS = 2  # flag: each worker writes its own slot (heal off)
# A slot and its first n indices in one pack (the same bytes as the slot, then n int64s): a write is two packs, the
# slot with its odd sequence number, then the even one (bench/samples.py: the record runs at every batch).
_SLOT_WITH = [struct.Struct(f"{LOADER_SLOT.format}{n}q") for n in range(LOADER_INDICES + 1)]
_SEQ = struct.Struct("<Q")
_IDLE = _SLOT_WITH[0]  # a slot holding no batch


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


class _WorkerSlot:
    """A DataLoader worker's own slot in its iterator's file, where the main process leaves the slots to the
    workers (``LOADER_BY_WORKERS``): found at the worker's first batch (the file whose slot ``w`` names this
    process), then written as it takes a batch and as it asks for the next. Looked for at most LOOKS times (a
    failed look, out of file descriptors say, is tried again at the next batch), then never again."""

    LOOKS = 3

    def __init__(self, directory: str, w: int) -> None:
        self.directory, self.w = directory, w
        self.mm: mmap.mmap | None = None
        self.off = self.seq = self.pid = self.looks = 0
        self.holding = False

    def _find(self) -> bool:
        self.looks, self.pid = self.looks + 1, os.getpid()
        names = [n for n in os.listdir(self.directory) if n.endswith(LOADER_SUFFIX)]
        parent = f"{os.getppid()}-"  # fork and spawn: the main process's files first (a forkserver's: any)
        for name in sorted(names, key=lambda n: (n.startswith(parent), _iterator_number(n)), reverse=True):
            mm = _map_file(os.path.join(self.directory, name))
            if mm is None:
                continue
            off = LOADER_HEADER.size + self.w * LOADER_SLOT_SIZE
            magic, workers, _, flags, _ = LOADER_HEADER.unpack_from(mm, 0)
            if (
                magic == LOADER_MAGIC
                and flags & LOADER_BY_WORKERS
                and self.w < workers
                and len(mm) >= off + LOADER_SLOT_SIZE
            ):
                seq, pid = struct.unpack_from("<QI", mm, off)
                if pid == self.pid:
                    self.mm, self.off, self.seq = mm, off, seq + (seq & 1)
                    return True
            mm.close()
        return False

    def took(self, batch: int, index: Any) -> None:
        """The worker took batch ``batch`` (sample indices ``index``) from its queue: it works on it from now."""
        if self.mm is None and (self.looks >= self.LOOKS or not self._find()):
            return
        mm = self.mm
        if mm is None:
            return
        now, seq = time.time(), self.seq
        if type(index) is list and len(index) <= LOADER_INDICES:  # the usual batch: the pack inlined (per batch)
            n = len(index)
            try:
                _SLOT_WITH[n].pack_into(mm, self.off, seq + 1, self.pid, n, batch, now, now, n, *index)
            except (struct.error, TypeError):  # not sample numbers: the general path keeps their count
                self.seq = _pack_slot(mm, self.off, seq, self.pid, batch, index, now, now)
            else:
                _SEQ.pack_into(mm, self.off, seq + 2)
                self.seq = seq + 2
        else:
            self.seq = _pack_slot(mm, self.off, seq, self.pid, batch, index, now, now)
        self.holding = True

    def idle(self) -> None:
        """The worker asks for its next batch: it holds none from now."""
        self.holding = False
        mm = self.mm
        if mm is not None:
            seq = self.seq
            _IDLE.pack_into(mm, self.off, seq + 1, self.pid, 0, -1, 0.0, time.time(), 0)
            _SEQ.pack_into(mm, self.off, seq + 2)
            self.seq = seq + 2


def _iterator_number(name: str) -> int:
    """``<pid>-<n>.dl`` -> n (0 where the name is not one of ours)."""
    n = name[: -len(LOADER_SUFFIX)].rpartition("-")[2]
    return int(n) if n.isdigit() else 0


def _map_file(path: str) -> mmap.mmap | None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        return mmap.mmap(fd, size) if size >= LOADER_HEADER.size else None
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def _record_gets(directory: str, queue: Any, w: int) -> None:
    """In DataLoader worker ``w``: its index queue's ``get`` writes the worker's slot, "none held" before it waits
    and the batch it took after."""
    slot, get = _WorkerSlot(directory, w), queue.get

    def recorded(*args: Any, **kwargs: Any) -> Any:
        if slot.holding:
            try:
                slot.idle()
            except _RECORD_ERRORS:
                pass
        item = get(*args, **kwargs)
        if type(item) is tuple and len(item) == 2:
            try:
                slot.took(item[0], item[1])
            except _RECORD_ERRORS:
                pass
        return item

    queue.get = recorded


def _attach_worker_record(beats: _Beats, dataloader: Any) -> bool:
    """Each worker torch starts (fork, spawn: pickled by name, so the spawned worker's own hook wraps it) first
    has its index queue write its slot. False where torch's worker loop is not one it knows (the main process
    then keeps the record)."""
    worker = dataloader._utils.worker
    loop = worker._worker_loop
    code = loop.__code__
    names = code.co_varnames[: code.co_argcount]
    if "index_queue" not in names or "worker_id" not in names:
        return False  # another torch's worker loop (or one wrapped already): not the workers' to record
    at_queue, at_id = names.index("index_queue"), names.index("worker_id")

    @functools.wraps(loop)
    def _worker_loop(*args: Any, **kwargs: Any) -> Any:
        if len(args) > max(at_queue, at_id):
            try:
                _record_gets(beats.directory, args[at_queue], int(args[at_id]))
            except Exception:  # noqa: BLE001, S110 - no record of this worker's batches, never a broken worker
                pass
        return loop(*args, **kwargs)

    worker._worker_loop = _worker_loop
    return True


class _LoaderTasks:
    """The batches outstanding at each worker of one DataLoader iterator, mirrored into its memory-mapped file."""

    count = 0  # iterators made in this process: each gets its own file

    def __init__(self, directory: str, it: Any, by_workers: bool) -> None:
        _LoaderTasks.count += 1
        self.by_workers = by_workers  # each worker writes its own slot; this one writes them once, here
        self.path = os.path.join(directory, f"{os.getpid()}-{_LoaderTasks.count}{LOADER_SUFFIX}")
        self.workers = int(it._num_workers)
        self.queues: list[list[tuple[int, Any, float]]] = [[] for _ in range(self.workers)]
        self.seq = [0] * self.workers
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
        flags = LOADER_BY_WORKERS if by_workers else 0
        LOADER_HEADER.pack_into(self.mm, 0, LOADER_MAGIC, self.workers, iterable, flags, name)
        self.pids = [int(getattr(w, "pid", 0) or 0) for w in getattr(it, "_workers", [])][: self.workers]
        self.pids += [0] * (self.workers - len(self.pids))
        for w in range(self.workers):
            self._write(w, None)

    def _write(self, w: int, since: float | None) -> None:
        q = self.queues[w]
        batch, index, sent = q[0] if q else (-1, None, 0.0)
        off = LOADER_HEADER.size + w * LOADER_SLOT_SIZE
        self.seq[w] = _pack_slot(self.mm, off, self.seq[w], self.pids[w], batch, index, sent, since or sent)

    def begin_reset(self) -> None:
        """A new epoch of the same iterator (persistent workers) starts: torch first waits for the batches the
        workers still have of the last one (a loop that stopped early). They stay recorded until it is done."""
        if self.by_workers:
            return
        self.stale_by = [len(q) for q in self.queues]
        self.resetting = True

    def end_reset(self) -> None:
        """torch's reset is done: the last epoch's batches are all back; the new epoch's stay."""
        if self.by_workers:
            return
        now = time.time()  # (a slot written with no time is one nobody wrote since the file was made)
        for w, q in enumerate(self.queues):
            del q[: self.stale_by[w]]
            self._write(w, now)
        self.stale_by = [0] * self.workers
        self.resetting = False
        self.retried.clear()  # batch numbers start again at 0

    def sent(self, batch: int, index: Any, w: int) -> None:
        """Batch ``batch``, the sample indices ``index``, went to worker ``w``."""
        q = self.queues[w]
        q.append((batch, index, time.time()))
        if len(q) == 1:
            self._write(w, None)

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
        self._write(w, time.time())

    def done(self, w: int) -> None:
        """Worker ``w`` has no more data this epoch (an exhausted IterableDataset): what it was sent never comes."""
        del self.queues[w][self.stale_by[w] :]
        self._write(w, time.time())

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
