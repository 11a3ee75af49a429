"""hangwatch autobeat: makes every Python process of a PyTorch job beat, with no code change.

``hangwatch run`` puts this directory first on the job's PYTHONPATH. At interpreter start Python
imports this ``sitecustomize``; it first runs the ``sitecustomize`` that was there before (if any)
and takes this directory off ``sys.path`` again. Then, once ``torch`` is imported (never before, and
never importing it itself), it installs:

- a global optimizer step post-hook: one beat per ``optimizer.step()``; the step is the number of
  optimizer steps taken (the largest count of any optimizer in the process);
- a wrapper of ``_BaseDataLoaderIter.__next__``: one beat per batch delivered; and, for each multiprocessing
  DataLoader iterator, the batch and sample indices each worker holds, in a memory-mapped file ``<pid>-<n>.dl``;
- phases, so an incident says what the job was doing: ``checkpoint`` around ``torch.save`` and
  ``torch.distributed.checkpoint.save``, ``compile`` between torch's compile start and end
  callbacks, ``validation`` while a Lightning evaluation loop or ``transformers.Trainer.evaluate``
  runs. Checkpoint and compile phases carry a deadline (``$HANGWATCH_PHASE_TIMEOUT``, the run's
  ``--max-slow``): no stall is declared inside them before it;
- checkpoints, for a restart to resume from: each ``torch.save`` / ``torch.distributed.checkpoint.save``
  to a path, Lightning's ``Trainer.save_checkpoint`` and the HF Trainer's ``checkpoint-N`` directories
  are appended as one JSON line to ``$HANGWATCH_HEARTBEAT_DIR/checkpoints.jsonl`` (path, step, kind).

A beat writes into this process's 128-byte memory-mapped slot ``<pid>.hb`` under
``$HANGWATCH_HEARTBEAT_DIR``, the layout ``hangwatch.beat`` uses (the slot carries ``$RANK``).
Standard library only, any Python 3: the job's interpreter need not have hangwatch installed.
Everything fails quietly: a heartbeat must never break the job. ``HANGWATCH_AUTOBEAT=0`` (what
``hangwatch run --no-autobeat`` sets) leaves the job untouched.
"""

from __future__ import annotations

import collections
import functools
import json
import mmap
import os
import struct
import sys
import time
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar

_HERE = os.path.dirname(os.path.abspath(__file__))


def _chain() -> None:
    """Run the sitecustomize this one shadows; leave sys.path as the job would have it."""
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    mine = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # type: ignore[import-not-found]  # noqa: F401 - the next one on sys.path, if any
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            _site_error(e)
    except Exception as e:  # noqa: BLE001 - what site.py does with a broken sitecustomize: say so, go on
        _site_error(e)
    if "sitecustomize" not in sys.modules and mine is not None:
        sys.modules["sitecustomize"] = mine  # none further down: site.py expects to find this one


def _site_error(e: BaseException) -> None:
    sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(e).__name__}: {e}\n")


# --- the slot (same layout as hangwatch/beat.py) ---------------------------------------------------------
MAGIC = 0x31425748
SLOT_SIZE = 128
NAME_SIZE = 64
HEADER = struct.Struct("<iiII")
BEAT = struct.Struct("<dqQ")
PHASE = struct.Struct("<dd64s")
BEAT_OFFSET, PHASE_OFFSET = 16, 40


class _Beats:
    """This process's slot, opened on the first beat (a forked child opens its own)."""

    def __init__(self, directory: str, phase_timeout: float) -> None:
        self.directory = directory
        self.phase_timeout = phase_timeout
        self.reset()

    def reset(self) -> None:
        """Forget the slot (after fork: the child opens its own on its first beat)."""
        self.mm: mmap.mmap | None = None
        self.failed = False
        self.count = 0
        self.step = -1
        self.rank = -1
        self.rank_check_at = 0.0
        self.total = 0  # the trainer's max steps, when it is known
        self.offset = 0  # the trainer's global step at its start (a run resumed from a checkpoint)
        self.per_optimizer: dict[int, int] = {}
        self.phases: list[tuple[str, float, float]] = []
        self.flight: Any = None  # this rank's flight recorder reader (a forked child starts none)
        self.flight_entry: dict[str, Any] = {}

    def _open(self) -> mmap.mmap | None:
        if self.failed:
            return None
        try:
            fd = os.open(os.path.join(self.directory, f"{os.getpid()}.hb"), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                os.ftruncate(fd, SLOT_SIZE)
                self.mm = mmap.mmap(fd, SLOT_SIZE)
            finally:
                os.close(fd)
            self._header()
        except (OSError, ValueError):
            self.failed = True
            self.mm = None
        return self.mm

    def _header(self) -> None:
        rank = os.environ.get("RANK", "")
        if rank.lstrip("-").isdigit():
            self.rank = int(rank)
        else:
            self.rank = _dist_rank()
        if self.mm is not None:
            HEADER.pack_into(self.mm, 0, MAGIC, self.rank, os.getpid(), self.total)

    def set_total(self, total: Any) -> None:
        """The steps the trainer will run (its max steps), for the ETA; 0 or unknown is left out."""
        try:
            n = int(total)
        except (TypeError, ValueError, OverflowError):
            return
        if 0 < n < 2**32:
            self.total = n
            if (self.mm if self.mm is not None else self._open()) is not None:
                self._header()

    def set_start(self, done: Any) -> None:
        """The trainer's global step when it starts (a resumed run starts past 0): beats then count from
        there, in the unit of its max steps, so the ETA of a resumed run is the rest of it."""
        try:
            n = int(done)
        except (TypeError, ValueError, OverflowError):
            return
        if n > 0 and not self.per_optimizer:
            self.offset = n

    def beat(self) -> None:
        """One beat: the time, the step, the count."""
        mm = self.mm if self.mm is not None else self._open()
        if mm is None:
            return
        self.count += 1
        BEAT.pack_into(mm, BEAT_OFFSET, time.time(), self.step, self.count)

    def optimizer_step(self, optimizer: object) -> None:
        """The global optimizer step post-hook."""
        n = self.per_optimizer.get(id(optimizer), 0) + 1
        self.per_optimizer[id(optimizer)] = n
        self.step = max(self.step, self.offset + n)
        if self.rank < 0 and self.mm is not None and time.monotonic() >= self.rank_check_at:
            # mp.spawn ranks learn their rank at init_process_group: asked again once a second, not at every step
            # (the ask costs about 2 us, a tenth of a fast step's budget for all of hangwatch)
            self.rank_check_at = time.monotonic() + 1.0
            self._header()
        self.beat()

    def enter(self, name: str, timeout: float | None) -> None:
        """A phase starts (phases nest; the innermost is shown)."""
        mm = self.mm if self.mm is not None else self._open()
        if mm is None:
            return
        now = time.time()
        self.phases.append((name, now + timeout if timeout else 0.0, now))
        PHASE.pack_into(mm, PHASE_OFFSET, self.phases[-1][1], now, name.encode()[:NAME_SIZE])
        self.beat()

    def saved(self, path: Any, kind: str, step: Any = None) -> None:
        """A checkpoint was written to ``path`` (a str or os.PathLike; a buffer is not a checkpoint file)."""
        try:
            if not isinstance(path, (str, os.PathLike)):
                return
            n = int(step) if step is not None else (self.step if self.step >= 0 else None)
            line = json.dumps(
                {
                    "at": time.time(),
                    "pid": os.getpid(),
                    "rank": self.rank,
                    "kind": kind,
                    "path": os.path.abspath(os.fspath(path)),
                    "step": n,
                }
            )
            fd = os.open(
                os.path.join(self.directory, "checkpoints.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644
            )
            try:
                os.write(fd, (line + "\n").encode())  # one write of one short line: appends never interleave
            finally:
                os.close(fd)
        except Exception:  # noqa: BLE001, S110 - a record is a nicety; never break the job
            pass

    def leave(self) -> None:
        """The innermost phase ends."""
        if self.mm is None:
            return
        if self.phases:
            self.phases.pop()
        if self.phases:
            name, deadline, started = self.phases[-1]
            PHASE.pack_into(self.mm, PHASE_OFFSET, deadline, started, name.encode()[:NAME_SIZE])
        else:
            PHASE.pack_into(self.mm, PHASE_OFFSET, 0.0, 0.0, b"")
        self.beat()


# --- the batches each DataLoader worker holds (read by hangwatch/capture/loader.py) ------------------------------
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
    process), then written as it takes a batch and as it asks for the next. Once found or not, never looked for
    again."""

    def __init__(self, directory: str, w: int) -> None:
        self.directory, self.w = directory, w
        self.mm: mmap.mmap | None = None
        self.off = self.seq = self.pid = 0
        self.looked = self.holding = False

    def _find(self) -> bool:
        self.looked, self.pid = True, os.getpid()
        names = [n for n in os.listdir(self.directory) if n.endswith(LOADER_SUFFIX)]
        for name in sorted(names, key=_iterator_number, reverse=True):  # the newest iterator's file first
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
        if self.mm is None and (self.looked or not self._find()):
            return
        now = time.time()
        self.seq = _pack_slot(self.mm, self.off, self.seq, self.pid, batch, index, now, now)
        self.holding = True

    def idle(self) -> None:
        """The worker asks for its next batch: it holds none from now."""
        self.holding = False
        if self.mm is not None:
            self.seq = _pack_slot(self.mm, self.off, self.seq, self.pid, -1, None, 0.0, time.time())


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


def _attach_worker_record(beats: _Beats, dataloader: Any) -> None:
    """Each worker torch starts (fork, spawn: pickled by name, so the spawned worker's own hook wraps it) first
    has its index queue write its slot."""
    worker = dataloader._utils.worker
    loop = worker._worker_loop
    code = loop.__code__
    names = code.co_varnames[: code.co_argcount]
    if "index_queue" not in names or "worker_id" not in names:
        return  # another torch's worker loop: no record of its batches
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
        for w, q in enumerate(self.queues):
            del q[: self.stale_by[w]]
            self._write(w, None)
        self.stale_by = [0] * self.workers
        self.resetting = False
        self.retried.clear()  # batch numbers start again at 0

    def sent(self, batch: int, index: Any, w: int) -> None:
        """Batch ``batch``, the sample indices ``index``, went to worker ``w``."""
        if self.by_workers:
            return
        q = self.queues[w]
        q.append((batch, index, time.time()))
        if len(q) == 1:
            self._write(w, None)

    def received(self, batch: int, w: int) -> None:
        """Batch ``batch`` came back from worker ``w``: it now works on its next one, since now."""
        if self.by_workers:
            return
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
        if self.by_workers:
            return
        del self.queues[w][self.stale_by[w] :]
        self._write(w, None)

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


# --- heal in place (hangwatch run --on-hang heal) ------------------------------------------------------------
# hangwatch asks for a heal by writing ``<pid>-<n>.heal`` beside the iterator's ``.dl`` file (one JSON object: seq,
# worker, pid, batch, sample, why, when asked and for how long). The main process reads it while it waits in torch's
# own polling loop for a batch (twice a second, only then), replaces that worker with a fresh one (torch's worker loop
# with the iterator's own arguments: the same worker id, seed and worker_init_fn) and hands it the batches it held
# again, in order; a batch that hangs a second time is handed again without the sample named (or dropped, when no
# sample was named or none is left; never in a distributed job, whose ranks must take the same steps), and the samples
# left out are taken out of every later batch of that dataset (``_attach_skip``). It answers with one JSON line in
# ``<pid>-<n>.heals``. A worker that died is replaced the same way, unasked (torch's SIGCHLD error is off for the
# iterator's workers while heal is on: its own check, at each wait, finds the dead one). ``$HANGWATCH_HEAL``: how many
# workers the job may replace ("0" or unset: heal is off), shared by its processes through ``heal-taken-K`` files.
HEAL_ENV = "HANGWATCH_HEAL"
HEAL_SKIP_ENV = "HANGWATCH_HEAL_SKIP"
HEAL_REQUEST = ".heal"
HEAL_ANSWERS = ".heals"
HEAL_POLL_S = 0.5  # how often a main process waiting for a batch looks for a request
HEAL_END_S = 2.0  # how long a stuck worker is given to end after SIGTERM, then after SIGKILL


class _Redo(Exception):
    """A heal changed what the iterator waits for: torch's ``_next_data`` starts again (its state is whole)."""


class _NotHealed(Exception):
    """Why this heal cannot be done here (the answer says it; hangwatch then restarts the job)."""


def _distributed() -> bool:
    """A process group is up: the ranks must take the same steps."""
    dist = sys.modules.get("torch.distributed")
    try:
        return bool(dist is not None and dist.is_available() and dist.is_initialized())
    except Exception:  # noqa: BLE001 - a torch without it
        return False


HEAL_TAKEN = "heal-taken-"  # heartbeat/heal-taken-K: heal K of the run's allowance, taken (by any process of the job)


def _take_heal(directory: str) -> bool:
    """One heal of the run's allowance ($HANGWATCH_HEAL), shared by every process of the job (each rank's
    DataLoaders): the first free token file, created exclusively; False when all are taken."""
    try:
        allowed = int(os.environ.get(HEAL_ENV, "0") or 0)
    except ValueError:
        return False
    for k in range(allowed):
        try:
            os.close(os.open(os.path.join(directory, f"{HEAL_TAKEN}{k}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            continue
        except OSError:
            return False
    return False


def _free_lock(lock: Any) -> None:
    """The result queue's write lock, after a worker was ended: a worker killed while it wrote would leave it held
    and every other worker waiting on it. A holder that is alive lets go within a batch's write; one that does not
    for 2 s is the ended worker: released either way."""
    if lock is not None:
        lock.acquire(timeout=2.0)
        lock.release()


class _Healer:
    """Heals the workers of one DataLoader iterator, asked (a request file) or not (a dead worker)."""

    left = 0  # $HANGWATCH_HEAL: heal is on while > 0 (the allowance itself is the job's heal-taken-K files)
    skipped: ClassVar[dict[str, set[Any]]] = {}  # a dataset's key -> the samples heal left out of it
    loop: Any = None  # torch's worker loop
    loop_args: ClassVar[list[tuple[str, Any]]] = []  # its parameters, and where the iterator keeps each

    def __init__(self, t: _LoaderTasks) -> None:
        base = t.path[: -len(LOADER_SUFFIX)]
        self.request, self.answers = base + HEAL_REQUEST, base + HEAL_ANSWERS
        self.stamp: tuple[int, int] | None = None
        self.answered = 0  # the newest request answered

    def poll(self, it: Any, t: _LoaderTasks) -> bool:
        """A new request, acted on and answered; True if the iterator's tasks changed."""
        try:
            st = os.stat(self.request)
        except OSError:
            return False
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self.stamp:
            return False
        self.stamp = stamp
        try:
            with open(self.request) as f:
                req = json.load(f)
            seq = int(req["seq"])
        except (OSError, ValueError, KeyError, TypeError):
            return False  # half a file cannot be (hangwatch writes it atomically): nothing to answer
        if seq <= self.answered:
            return False
        self.answered = seq
        answer: dict[str, Any] = {"seq": seq, "worker": req.get("worker"), "batch": req.get("batch")}
        try:
            w = int(req["worker"])
            held = t.queues[w][0][0] if 0 <= w < t.workers and t.queues[w] else None
            if not 0 <= w < t.workers or it._workers[w].pid != req.get("pid") or held != req.get("batch"):
                answer["gone"] = True  # it moved on, ended or was replaced since it was captured: nothing to do
                raise _NotHealed("that worker no longer holds that batch (it moved on, or was replaced)")
            if time.time() - float(req.get("asked_at") or 0) > float(req.get("good_for") or 15):
                raise _NotHealed("the ask came too late (hangwatch has given up on it)")
            answer.update(self.heal(it, t, w, req.get("sample"), str(req.get("why") or "stuck")))
        except _NotHealed as e:
            answer.update(ok=False, why=str(e))
        except Exception as e:  # noqa: BLE001 - never a broken job: the answer says it, hangwatch restarts instead
            answer.update(ok=False, why=f"the DataLoader's internals are not as expected ({type(e).__name__}: {e})")
        self.answer(answer)
        return bool(answer.get("ok"))

    def dead(self, it: Any, t: _LoaderTasks, wait: float = 0.0) -> bool:
        """Dead workers, replaced unasked: those torch found at its own check (it marked them done and raised), or,
        waiting up to ``wait`` s for the kernel to end it, one that died as its last batch was fetched (its shared
        memory went with it). False when none can be (the caller then lets the error through)."""
        end = time.monotonic() + wait
        while all(p.is_alive() for p in it._workers[: t.workers]) and time.monotonic() < end:
            time.sleep(0.05)
        gone = [w for w, p in enumerate(it._workers[: t.workers]) if not p.is_alive()]
        if not gone:
            return False
        for w in gone:
            if it._workers_status[w]:
                it._mark_worker_as_unavailable(w)  # what torch's own check does with a dead worker
        for w in gone:
            code = it._workers[w].exitcode
            why = f"killed by signal {-code}" if code is not None and code < 0 else f"exited with status {code}"
            answer: dict[str, Any] = {"seq": None, "worker": w, "died": why}
            try:
                answer.update(self.heal(it, t, w, None, f"dead: {why}"))
            except Exception as e:  # noqa: BLE001 - torch's own error then reaches the job, as without hangwatch
                self.answer({**answer, "ok": False, "why": str(e)})
                return False
            it._workers_status[w] = True
            self.answer(answer)
        return True

    def heal(self, it: Any, t: _LoaderTasks, w: int, sample: Any, why: str) -> dict[str, Any]:
        """Replace worker ``w`` and hand its batches to the new one; what was done, for the answer."""
        if t.resetting:
            raise _NotHealed("the DataLoader is between two epochs (its workers are being reset)")
        held = [(b, ix) for b, ix, _ in t.queues[w]]
        first = held[0][0] if held else None
        skipped: list[Any] = []
        dropped = None
        if first is not None and t.retried.get(first, 0) >= 1:  # the same batch again: leave its sample out
            ix = held[0][1]
            listed = type(ix) in (list, tuple)
            rest = [i for i in ix if i != sample] if listed and sample is not None and sample in ix else None
            if rest:
                held[0] = (first, type(ix)(rest))
                skipped = [sample]
            else:
                if _distributed():
                    raise _NotHealed("dropping a batch in one rank would leave the ranks a step apart")
                skipped = [_plain(i) for i in (ix if listed else [ix])]
                dropped = first
            t.skip.update(skipped)  # (a heal that fails below leaves it out all the same: it hung twice)
        if not _take_heal(os.path.dirname(t.path)):
            _Healer.left = 0  # the job's allowance is used up: no healer for the iterators still to come
            raise _NotHealed(f"the {os.environ.get(HEAL_ENV)} heals allowed (--max-heals) are used up")
        old = it._workers[w]
        pid = old.pid
        self._end(old)
        _free_lock(getattr(it._worker_result_queue, "_wlock", None))
        fresh = self._start(it, t, w)
        for b, ix in held:
            if b == dropped:
                del it._task_info[b]
                it._tasks_outstanding -= 1
                it._workers_num_tasks[w] -= 1
                continue
            fresh.put((b, ix))  # (not recorded again: the record keeps them, sent now)
        _record_put(t, fresh, w)
        t.queues[w] = [(b, ix, time.time()) for b, ix in held if b != dropped]
        t._write(w, time.time())
        if dropped is not None:
            it._try_put_index()  # the pipeline kept full
        if first is not None:
            t.retried[first] = t.retried.get(first, 0) + 1
        action = "dropped" if dropped is not None else "skipped" if skipped else "retried"
        return {
            "ok": True,
            "old_pid": pid,
            "pid": it._workers[w].pid,
            "batch": first,
            "batches": [b for b, _ in held],
            "action": action,
            "skipped": skipped,
            "why": why,
            "dataset": type(it._dataset).__name__,
            "dataset_key": _dataset_key(it._dataset),
            "at": time.time(),
        }

    @staticmethod
    def _end(p: Any) -> None:
        if p.is_alive():
            p.terminate()
            p.join(HEAL_END_S)
        if p.is_alive():
            p.kill()
            p.join(HEAL_END_S)
        if p.is_alive():
            raise _NotHealed(f"worker pid {p.pid} did not end after SIGKILL (in the kernel: an NFS read, a GPU call)")

    @staticmethod
    def _start(it: Any, t: _LoaderTasks, w: int) -> Any:
        """A fresh worker ``w``: a new index queue (not yet recorded), and torch's own worker loop with the iterator's
        own arguments (a started Process keeps neither its target nor its arguments)."""
        import multiprocessing

        old, q = it._workers[w], it._index_queues[w]
        ctx = multiprocessing.get_context(getattr(type(old), "_start_method", None))
        nq = ctx.Queue()
        nq.cancel_join_thread()
        args = tuple(
            nq if name == "index_queue" else w if name == "worker_id" else getattr(it, attr)
            for name, attr in _Healer.loop_args
        )
        p = type(old)(target=_Healer.loop, args=args)
        p.daemon = True
        p.start()
        q.cancel_join_thread()
        q.close()
        it._workers[w], it._index_queues[w] = p, nq
        t.pids[w] = int(p.pid or 0)
        return nq

    def answer(self, answer: dict[str, Any]) -> None:
        """One JSON line, appended (one write: a reader never sees half of it)."""
        try:
            fd = os.open(self.answers, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (json.dumps(answer) + "\n").encode())
            finally:
                os.close(fd)
        except OSError:
            pass


def _plain(i: Any) -> Any:
    """A sample index as JSON takes it: an int where it is one (a tensor's too), else its repr."""
    try:
        return int(i)
    except (TypeError, ValueError):
        return repr(i)


# torch's worker loop takes these, by name: where the iterator keeps each (None: the index queue, the worker id).
_LOOP_ARGS = {
    "dataset_kind": "_dataset_kind",
    "dataset": "_dataset",
    "index_queue": None,
    "data_queue": "_worker_result_queue",
    "done_event": "_workers_done_event",
    "auto_collation": "_auto_collation",
    "collate_fn": "_collate_fn",
    "drop_last": "_drop_last",
    "base_seed": "_base_seed",
    "init_fn": "_worker_init_fn",
    "worker_id": None,
    "num_workers": "_num_workers",
    "persistent_workers": "_persistent_workers",
    "shared_seed": "_shared_seed",
}


def _loop_args(dataloader: Any) -> list[tuple[str, Any]] | None:
    """torch's worker loop's parameters, each with the iterator attribute it is given; None where one is not known
    (another torch: heal is then off, and hangwatch restarts instead)."""
    import inspect

    try:
        names = list(inspect.signature(dataloader._utils.worker._worker_loop).parameters)
    except (AttributeError, TypeError, ValueError):
        return None
    if not all(n in _LOOP_ARGS for n in names) or "index_queue" not in names or "worker_id" not in names:
        return None
    return [(n, _LOOP_ARGS[n]) for n in names]


def _healable(it: Any) -> bool:
    """What heal needs of torch's iterator: a map-style dataset, batches in order, the internals it uses."""
    return (
        getattr(it, "_dataset_kind", None) == 0
        and getattr(it, "_in_order", True)
        and all(hasattr(it, n) for n in ("_task_info", "_workers_num_tasks", "_workers_status", "_try_put_index"))
        and all(hasattr(it, a) for _, a in _Healer.loop_args if a is not None)
    )


def _attach_heal(dataloader: Any) -> None:
    """--on-hang heal: a main process waiting for a batch looks for hangwatch's request twice a second; a heal that
    changed the tasks starts torch's ``_next_data`` again; torch's SIGCHLD error is off for healable iterators."""
    mp = dataloader._MultiProcessingDataLoaderIter
    try_get, next_data = mp._try_get_data, mp._next_data
    signals = dataloader._utils.signal_handling

    @functools.wraps(try_get)
    def _try_get_data(self: Any, timeout: float = 5.0) -> Any:
        h: _Healer | None = self.__dict__.get("_hangwatch_healer")
        if h is None:
            return try_get(self, timeout)
        t = self.__dict__["_hangwatch_tasks"]
        end = time.monotonic() + timeout
        while True:
            try:
                got = try_get(self, max(0.0, min(HEAL_POLL_S, end - time.monotonic())))
            except RuntimeError:
                if not h.dead(self, t):
                    raise
                raise _Redo from None
            except (OSError, EOFError):  # a batch whose worker died as it was fetched: its shared memory is gone
                if not h.dead(self, t, wait=2.0):
                    raise
                raise _Redo from None
            if got[0]:
                return got
            if h.poll(self, t):
                raise _Redo
            if time.monotonic() >= end:
                return got

    @functools.wraps(next_data)
    def _next_data(self: Any) -> Any:
        while True:
            try:
                return next_data(self)
            except _Redo:
                continue

    mp._try_get_data, mp._next_data = _try_get_data, _next_data
    mp._hangwatch_signals = signals


def _attach_skip(dataloader: Any) -> None:
    """The samples heal left out (this run's, earlier attempts' too) are taken out of each batch the sampler gives,
    before torch numbers it; a batch with none left is not sent at all (but in a distributed job, where every rank
    must take the same steps: sent, and healed again or restarted)."""
    mp = dataloader._MultiProcessingDataLoaderIter
    next_index = mp._next_index

    @functools.wraps(next_index)
    def _next_index(self: Any) -> Any:
        t = self.__dict__.get("_hangwatch_tasks")
        skip = t.skip if t is not None else None
        while True:
            index = next_index(self)
            if not skip:
                return index
            try:
                if type(index) is list:
                    rest = [i for i in index if i not in skip]
                    if rest:
                        return rest if len(rest) < len(index) else index
                elif index not in skip:
                    return index
            except TypeError:  # unhashable indices (a custom sampler's): as they are
                return index
            if _distributed():
                return index

    mp._next_index = _next_index


def _dataset_key(dataset: Any) -> str:
    """A dataset's name for the samples heal left out of it: its class and length (a new epoch's new instance of the
    same dataset is the same one; a validation set of the same class is not, unless it has the same length)."""
    try:
        return f"{type(dataset).__qualname__}:{len(dataset)}"
    except Exception:  # noqa: BLE001 - a dataset with no working len()
        return type(dataset).__qualname__


def _heal_if_asked(dataloader: Any) -> None:
    """Heal is on where ``$HANGWATCH_HEAL`` allows heals and this torch's worker loop takes what heal knows; the
    samples earlier attempts left out (``$HANGWATCH_HEAL_SKIP``: JSON, dataset key -> indices) stay out."""
    try:
        _Healer.left = int(os.environ.get(HEAL_ENV, "0") or 0)
    except ValueError:
        _Healer.left = 0
    try:
        known = json.loads(os.environ.get(HEAL_SKIP_ENV) or "{}")
        for key, indices in known.items():
            _Healer.skipped.setdefault(str(key), set()).update(indices)
    except (ValueError, AttributeError, TypeError):
        pass
    args = _loop_args(dataloader) if _Healer.left > 0 else None
    if args is None:
        _Healer.left = 0
    else:
        _Healer.loop, _Healer.loop_args = dataloader._utils.worker._worker_loop, args
        _attach_heal(dataloader)
    if _Healer.left > 0 or _Healer.skipped:
        _attach_skip(dataloader)


def _heal_for(it: Any, t: _LoaderTasks) -> None:
    """A healer for this iterator, where heal is on and applies; torch's SIGCHLD error off for its workers."""
    if _Healer.left <= 0 or not _healable(it):
        return
    signals = type(it)._hangwatch_signals
    if it.__dict__.get("_worker_pids_set"):
        try:
            signals._remove_worker_pids(id(it))
            signals._set_worker_pids(id(it), ())
        except (RuntimeError, AttributeError):  # torch's SIGCHLD error stays on: no heal for this iterator
            return
    it.__dict__["_hangwatch_healer"] = _Healer(t)
    struct.pack_into("<i", t.mm, LOADER_FLAGS_AT, LOADER_HEALABLE)  # the record says so: hangwatch asks only then


def _start_tasks(beats: _Beats, it: Any, by_workers: bool) -> _LoaderTasks | None:
    """The record of a new iterator's workers, its index queues wrapped where the main process writes it; None
    where it cannot be made."""
    t = None
    try:
        t = _LoaderTasks(beats.directory, it, by_workers)
        if _Healer.left > 0 or _Healer.skipped:  # before torch's first batches: a sample left out is never sent again
            t.skip = _Healer.skipped.setdefault(_dataset_key(it._dataset), set())
        if not by_workers:
            _record_puts(t, it)
    except Exception:  # noqa: BLE001 - no record of its batches, never a broken job
        it.__dict__["_hangwatch_failed"] = True
        if t is not None:
            t.close()
        return None
    it.__dict__["_hangwatch_tasks"] = t
    return t


def _attach_loader_tasks(beats: _Beats, dataloader: Any) -> None:
    """Record, per worker of each multiprocessing DataLoader iterator, the batch and sample indices it holds."""
    mp = dataloader._MultiProcessingDataLoaderIter
    reset, get, shutdown = mp._reset, mp._get_data, mp._shutdown_workers
    stop = getattr(getattr(dataloader, "_utils", None), "worker", None)
    stop = getattr(stop, "_IterableDatasetStopIteration", None)
    _heal_if_asked(dataloader)
    by_workers = _Healer.left <= 0  # heal off: each worker writes its own slot, the main process nothing a batch
    if by_workers:
        _attach_worker_record(beats, dataloader)

    @functools.wraps(reset)
    def _reset(self: Any, *args: Any, **kwargs: Any) -> Any:
        t: _LoaderTasks | None = self.__dict__.get("_hangwatch_tasks")
        if t is None:
            if self.__dict__.get("_workers") and not self.__dict__.get("_hangwatch_failed"):
                t = _start_tasks(beats, self, by_workers)
            out = reset(self, *args, **kwargs)
            if t is not None and _Healer.left > 0:
                _heal_for(self, t)
            return out
        try:
            t.begin_reset()
        except _RECORD_ERRORS:
            pass
        out = reset(self, *args, **kwargs)
        try:
            t.end_reset()
        except _RECORD_ERRORS:
            pass
        return out

    @functools.wraps(get)
    def _get_data(self: Any) -> Any:
        got = get(self)
        while (
            "_hangwatch_healer" in self.__dict__ and type(got[0]) is int and len(self._task_info.get(got[0], ())) != 1
        ):
            got = get(self)  # a batch a replaced worker had flushed as it was ended: here, or handed out, already
        t = self.__dict__.get("_hangwatch_tasks")
        if t is not None:
            try:
                w = self._task_info[got[0]][0]
                if stop is not None and isinstance(got[1], stop):
                    t.done(w)
                else:
                    t.received(got[0], w)
            except _RECORD_ERRORS:
                pass
        return got

    @functools.wraps(shutdown)
    def _shutdown_workers(self: Any) -> Any:
        t = self.__dict__.pop("_hangwatch_tasks", None)
        try:
            return shutdown(self)
        finally:
            if t is not None:
                t.close()

    mp._reset, mp._shutdown_workers = _reset, _shutdown_workers
    if not by_workers:
        mp._get_data = _get_data


def _dist_rank() -> int:
    dist: Any = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:  # noqa: BLE001, S110 - no rank known is a fine answer
        pass
    return -1


def _in_phase(beats: _Beats, name: str, timeout: float | None, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped so that it runs inside the phase ``name``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        beats.enter(name, timeout)
        try:
            return fn(*args, **kwargs)
        finally:
            beats.leave()

    wrapper.__hangwatch_phase__ = name  # type: ignore[attr-defined]
    return wrapper


# --- what to attach, per module, once it is imported ---------------------------------------------------------
def _attach_torch(beats: _Beats, torch: Any) -> None:
    from torch.optim.optimizer import register_optimizer_step_post_hook

    register_optimizer_step_post_hook(lambda optimizer, args, kwargs: beats.optimizer_step(optimizer))
    from torch.utils.data import dataloader

    it = dataloader._BaseDataLoaderIter
    original = it.__next__

    @functools.wraps(original)
    def __next__(self: Any) -> Any:
        try:
            if "_hangwatch_seen" not in self.__dict__:  # once an iterator (a WeakSet's test costs a weak reference)
                self.__dict__["_hangwatch_seen"] = True
                _ITERATORS.add(self)
                _RECENT_WORKERS.append(list(getattr(self, "_workers", ())))
        except Exception:  # noqa: BLE001, S110 - an iterator that cannot be weakly referenced goes unrecorded
            pass
        try:
            data = original(self)
        except StopIteration:
            raise
        except BaseException as e:
            _note_dead_workers(beats.directory, list(getattr(self, "_workers", ())), e)
            raise
        beats.beat()
        return data

    it.__next__ = __next__  # type: ignore[method-assign]
    sys.excepthook = _excepthook(beats.directory, sys.excepthook)
    _attach_remedy(dataloader)
    try:
        _attach_loader_tasks(beats, dataloader)
    except Exception:  # noqa: BLE001, S110 - torch's DataLoader internals moved: no record of its batches
        pass
    import torch.serialization

    save = _recorded(
        beats,
        "torch.save",
        lambda a, k: a[1] if len(a) > 1 else k.get("f"),
        _in_phase(beats, "checkpoint", beats.phase_timeout, torch.serialization.save),
    )
    torch.serialization.save = save
    torch.save = save


# heartbeat/worker-deaths.jsonl: a DataLoader iterator raised with a worker of it dead (its exit code), as the main
# process saw it. The job's own traceback may not say it: a SIGKILLed worker can cut a batch's hand-over
# (ConnectionResetError), and torch's SIGCHLD handler raising while that traceback is written loses it ("lost
# sys.stderr", seen under load). A crash is then named from this line.
# The iterators seen, for an error raised outside their __next__ (torch's SIGCHLD handler raises wherever the main
# thread is, a print in the loop's body say): the job's unhandled error records their dead workers first.
# The iterator itself is freed as the error unwinds the loop's frame, before the hook runs: the workers of the last
# few iterators are kept (their exit codes outlive the iterator's shutdown, which joins them).
_ITERATORS: weakref.WeakSet[Any] = weakref.WeakSet()
_RECENT_WORKERS: collections.deque[list[Any]] = collections.deque(maxlen=4)


def _excepthook(directory: str, previous: Callable[..., Any]) -> Callable[..., Any]:
    def hook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        try:
            for workers in list(_RECENT_WORKERS):
                _note_dead_workers(directory, workers, error, unhandled=True)
        finally:
            previous(kind, error, tb)

    return hook


# A worker's hand-over is cut as its files close, a moment before it can be reaped: for those errors its exit code is
# waited for a little (the job is failing anyway), never for others.
CUT_HANDOVER: tuple[type[BaseException], ...] = (
    ConnectionResetError,
    ConnectionRefusedError,
    BrokenPipeError,
    EOFError,
)
DEATH_WAIT_S = 0.5


def _note_dead_workers(directory: str, workers: list[Any], error: BaseException, unhandled: bool = False) -> None:
    try:
        if not workers:
            return
        deadline = time.monotonic() + (DEATH_WAIT_S if isinstance(error, CUT_HANDOVER) else 0.0)
        while True:
            dead = [(w.pid, w.exitcode) for w in workers if w.exitcode not in (None, 0)]
            if dead or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        if not dead:
            return
        record = {"pid": os.getpid(), "workers": dead, "error": type(error).__name__, "at": time.time()}
        line = json.dumps({**record, "unhandled": unhandled})  # unhandled: the error the process dies of
        fd = os.open(os.path.join(directory, "worker-deaths.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode() + b"\n")
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001, S110 - a record must never change the job's own error
        pass


def _recorded(
    beats: _Beats,
    kind: str,
    where: Callable[[tuple[Any, ...], dict[str, Any]], Any],
    fn: Callable[..., Any],
    step: Callable[[tuple[Any, ...]], Any] | None = None,
) -> Callable[..., Any]:
    """``fn`` that, once it has returned, records the checkpoint ``where(args, kwargs)`` names."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        try:
            beats.saved(where(args, kwargs), kind, step(args) if step is not None else None)
        except Exception:  # noqa: BLE001, S110 - never break the job
            pass
        return out

    return wrapper


def _dcp_path(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    writer = kwargs.get("storage_writer")
    return kwargs.get("checkpoint_id") or getattr(writer, "path", None) or getattr(writer, "checkpoint_id", None)


def _remedy_kwargs(kwargs: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The DataLoader keyword arguments with a restart's remedy applied; only what makes sense."""
    out = dict(kwargs)
    workers = int(out.get("num_workers") or 0)
    if "max_workers" in overrides and workers > int(overrides["max_workers"]):
        workers = out["num_workers"] = int(overrides["max_workers"])
    if "num_workers" in overrides:
        workers = out["num_workers"] = int(overrides["num_workers"])
    if workers == 0:
        for k in ("multiprocessing_context", "prefetch_factor"):
            out.pop(k, None)
        out["persistent_workers"] = False
        return out
    for k in ("multiprocessing_context", "persistent_workers", "prefetch_factor"):
        if k in overrides:
            out[k] = overrides[k]
    return out


def _main_is_guarded() -> bool:
    """Whether the main script runs its work under ``if __name__ == "__main__":`` (spawn-safe)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path:
        return True  # python -m pkg / -c: leave it to the job
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return True
    return "__name__ ==" in text or "__name__==" in text


def _unpicklable(kwargs: dict[str, Any]) -> str | None:
    """What of a DataLoader's arguments a spawned worker could not receive, or None."""
    import pickle

    for key in ("dataset", "collate_fn", "worker_init_fn", "sampler", "batch_sampler"):
        value = kwargs.get(key)
        if value is None:
            continue
        try:
            pickle.dumps(value)
        except Exception as e:  # noqa: BLE001 - any failure to pickle means spawn cannot ship it
            return f"its {key} cannot be pickled ({type(e).__name__})"
    return None


def _attach_remedy(dataloader: Any) -> None:
    """On a restart hangwatch chose a remedy for: override DataLoader arguments as each one is built,
    and say so once on stderr."""
    raw = os.environ.get("HANGWATCH_REMEDY_DATALOADER")
    if not raw:
        return
    import inspect
    import json

    overrides = json.loads(raw)
    why = os.environ.get("HANGWATCH_REMEDY_WHY", "a hang")
    guard = None
    if overrides.get("multiprocessing_context") in ("spawn", "forkserver") and not _main_is_guarded():
        # spawn re-imports the main script in each worker: without the guard the job would crash.
        overrides = {"num_workers": 0}
        guard = 'spawn needs `if __name__ == "__main__":` in the main script'
    cls = dataloader.DataLoader
    original = cls.__init__
    signature = inspect.signature(original)
    said: set[str] = set()

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            bound = signature.bind(self, *args, **kwargs)
            given = {k: v for k, v in bound.arguments.items() if k != "self"}
            changed = _remedy_kwargs(given, overrides)
        except Exception:  # noqa: BLE001 - an unexpected signature: build it as the job asked
            original(self, *args, **kwargs)
            return
        note = guard
        if changed.get("multiprocessing_context") in ("spawn", "forkserver") and changed.get("num_workers"):
            why_not = _unpicklable(changed)
            if why_not:  # spawn would crash at the first batch: no workers is the safe remedy left
                changed = {
                    k: v
                    for k, v in changed.items()
                    if k not in ("multiprocessing_context", "persistent_workers", "prefetch_factor")
                }
                changed["num_workers"] = 0
                note = f"spawn needs a picklable loader: {why_not}"
        diff = {
            k: v
            for k, v in changed.items()
            if given.get(k, signature.parameters[k].default if k in signature.parameters else None) != v
        }
        text = ", ".join(f"{k}={v!r}" for k, v in sorted(diff.items()))
        if text and text not in said:
            said.add(text)
            sys.stderr.write(f"hangwatch: remedy for {why}: DataLoader({text})" + (f" ({note})" if note else "") + "\n")
        original(self, **changed)

    cls.__init__ = __init__


def _attach_dynamo(beats: _Beats, module: Any) -> None:
    handler = module.callback_handler
    handler.register_start_callback(lambda *a, **k: beats.enter("compile", beats.phase_timeout))
    handler.register_end_callback(lambda *a, **k: beats.leave())


def _attach_dcp(beats: _Beats, module: Any) -> None:
    for name in ("save", "async_save"):
        fn = getattr(module, name, None)
        if fn is not None:
            setattr(
                module,
                name,
                _recorded(beats, "dcp", _dcp_path, _in_phase(beats, "checkpoint", beats.phase_timeout, fn)),
            )


def _attach_lightning(beats: _Beats, module: Any) -> None:
    loop = getattr(module, "_EvaluationLoop", None)
    if loop is not None and hasattr(loop, "run"):
        loop.run = _in_phase(beats, "validation", None, loop.run)


def _attach_lightning_fit(beats: _Beats, module: Any) -> None:
    loop = getattr(module, "_FitLoop", None)
    original = getattr(loop, "on_run_start", None)
    if loop is None or original is None:
        return

    def on_run_start(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        try:
            trainer = self.trainer
            n = trainer.max_steps if trainer.max_steps and trainer.max_steps > 0 else trainer.estimated_stepping_batches
            beats.set_total(n if n != float("inf") else None)
            beats.set_start(trainer.global_step)
        except Exception:  # noqa: BLE001, S110 - a total is a nicety; never break the trainer
            pass
        return out

    loop.on_run_start = on_run_start


def _attach_transformers_callbacks(beats: _Beats, module: Any) -> None:
    handler = getattr(module, "CallbackHandler", None)
    original = getattr(handler, "on_train_begin", None)
    if handler is None or original is None:
        return

    def on_train_begin(self: Any, args: Any, state: Any, control: Any) -> Any:
        beats.set_total(getattr(state, "max_steps", None))
        beats.set_start(getattr(state, "global_step", None))
        return original(self, args, state, control)

    handler.on_train_begin = on_train_begin


def _attach_transformers(beats: _Beats, module: Any) -> None:
    trainer = getattr(module, "Trainer", None)
    if trainer is not None and hasattr(trainer, "evaluate"):
        trainer.evaluate = _in_phase(beats, "validation", None, trainer.evaluate)
    if trainer is not None and hasattr(trainer, "_save_checkpoint"):  # output_dir/checkpoint-<global step>

        def hf_dir(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            self = args[0]
            step = self.state.global_step
            out = self._get_output_dir(trial=kwargs.get("trial", args[2] if len(args) > 2 else None))
            path = os.path.join(out, f"checkpoint-{step}")
            return path if os.path.isdir(path) else None

        trainer._save_checkpoint = _recorded(
            beats, "transformers", hf_dir, trainer._save_checkpoint, step=lambda a: a[0].state.global_step
        )


def _attach_lightning_trainer(beats: _Beats, module: Any) -> None:
    trainer = getattr(module, "Trainer", None)
    if trainer is not None and hasattr(trainer, "save_checkpoint"):
        trainer.save_checkpoint = _recorded(
            beats,
            "lightning",
            lambda a, k: a[1] if len(a) > 1 else k.get("filepath"),
            trainer.save_checkpoint,
            step=lambda a: a[0].global_step,
        )


# --- torch's flight recorder, read from outside (issue [2/5]) -------------------------------------------------------
# Once the job has initialised its process group, each rank serves torch's own worker server on a unix socket
# in the heartbeat directory (mode 0600; nothing listens on a TCP port): its C++ handlers (fr_trace_json,
# dump_traceback, ping) answer even while Python is stuck, and ours (FR_HANDLER) adds each entry's Python
# frames when the GIL is free. A torch without the server gets a thread that writes the dump when hangwatch
# asks through a FIFO. A registry file per rank says where: flight-<pid>.json.
FR_HANDLER = "hangwatch_fr"
FR_ENV = "HANGWATCH_FLIGHT"  # "0": --no-flight-recorder (or autobeat off); "fifo": pretend there is no server


INDUCTOR = "torch._inductor"


def _fr_dump() -> bytes:
    """This process's flight recorder, every entry with its Python frames (torch's pickle form), as JSON. NCCL's
    process groups record into a recorder of their own (measured on an H200, torch 2.11: ``_dump_fr_trace`` had
    no entry of an NCCL job, ``_dump_nccl_trace`` all of them): both are read, and merged."""
    import pickle

    c10d: Any = sys.modules["torch._C._distributed_c10d"]
    dumps: list[dict[str, Any]] = []
    errors: list[Exception] = []
    for name in ("_dump_fr_trace", "_dump_nccl_trace"):  # each on its own: one failing leaves the other
        fn: Any = getattr(c10d, name, None)
        if fn is None:
            continue
        try:
            dumps.append(pickle.loads(_without_inductor(functools.partial(fn, True, True, False))))  # noqa: S301
        except Exception as e:  # noqa: BLE001 - the other recorder may still answer
            errors.append(e)
    if not dumps:
        raise errors[0] if errors else RuntimeError("torch has no flight recorder")
    data = dumps[0] if len(dumps) == 1 else merge_dumps(dumps[0], dumps[1])
    return json.dumps(data, default=str).encode()


def merge_dumps(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The generic recorder's dump and NCCL's as one: the entries of both, every key of either (NCCL's
    communicator state), each group's config and status; a group in both (``cpu:gloo,cuda:nccl``) keeps its
    two statuses, NCCL's as ``<pg> (nccl)`` (the entries tell the two apart by their ``nccl:`` prefix).
    capture/flight.py merges the C++ handlers' answers the same way (this hook cannot import hangwatch)."""
    out = {**b, **a, "entries": list(a.get("entries") or []) + list(b.get("entries") or [])}
    for key in ("pg_config", "pg_status"):
        merged = dict(a.get(key) or {})
        for k, v in (b.get(key) or {}).items():
            merged[f"{k} (nccl)" if k in merged and key == "pg_status" else k] = v
        out[key] = merged
    for key in ("version", "comm_lib_version"):
        out[key] = b.get(key) or a.get(key)
    return out


_DUMP_LOCKS: list[Any] = []  # one dump at a time (the server may answer two requests at once)
_CLOSING: list[bool] = []  # set once the process group goes away: no dump after that
_CALLS = [0, 0.0]  # our handlers running now, and when the last one began (monotonic)
_LEFT: list[Any] = []  # a server whose handler never returned: never shut down (that would join it forever)
_FIFO_READER: list[str] = []  # the FIFO this process's reader thread serves, once started


def _dump_lock() -> Any:
    if not _DUMP_LOCKS:
        import threading

        _DUMP_LOCKS.extend([threading.Lock(), threading.Lock()])
    return _DUMP_LOCKS[0]


def _calls_lock() -> Any:
    _dump_lock()
    return _DUMP_LOCKS[1]


def _without_inductor(dump: Callable[[], Any]) -> Any:
    """``dump()``, without importing torch._inductor. torch's symbolizer looks ``torch._inductor`` up on the
    torch module (for the source of generated kernels), and torch's lazy ``__getattr__`` imports it there: with
    dynamo and sympy, ~1 s and 28 MB read on the first dump of a job that never compiled, seconds on a busy
    machine. A job that never imported it has no generated code: for the dump, the name is taken out of
    torch's lazy modules (the lookup fails, and torch's symbolizer goes on without it); an ``import`` of it by
    a thread of the job meanwhile is not touched (the import system does not ask the lazy table)."""
    if _CLOSING:
        raise RuntimeError("the process group is being destroyed")
    torch = sys.modules.get("torch")
    lazy = getattr(torch, "_lazy_modules", None)
    lock = _dump_lock()
    if not lock.acquire(timeout=5.0):  # another dump is stuck: this one may import torch._inductor, but answers
        if _CLOSING:
            raise RuntimeError("the process group is being destroyed")
        return dump()
    try:
        if _CLOSING:  # checked under the lock: destroy_process_group waits for a dump already under way
            raise RuntimeError("the process group is being destroyed")
        if INDUCTOR in sys.modules or not isinstance(lazy, set) or "_inductor" not in lazy:
            return dump()
        lazy.discard("_inductor")
        try:
            return dump()
        finally:
            lazy.add("_inductor")
    finally:
        lock.release()


def _fr_handler(req: Any, resp: Any) -> None:
    if _CLOSING:  # at once: _stop_flight waits for this call to leave before it shuts the server down
        resp.set_content(b"the process group is being destroyed", "text/plain")
        resp.set_status(503)
        return
    with _calls_lock():
        _CALLS[0] += 1
        _CALLS[1] = time.monotonic()
    try:
        resp.set_content(_fr_dump(), "application/json")
        resp.set_status(200)
    except Exception as e:  # noqa: BLE001 - an answer that says why beats no answer
        resp.set_content(f"{type(e).__name__}: {e}".encode(), "text/plain")
        resp.set_status(500)
    finally:
        with _calls_lock():
            _CALLS[0] -= 1


def _fifo_thread(fifo: str, out: str) -> None:
    """The fallback when torch has no worker server: wait (no CPU) for hangwatch to write to ``fifo``, then
    write the dump to ``out`` (atomically), again and again."""
    import threading

    def loop() -> None:
        try:  # the OS thread's name, as /proc shows it: what it reads and writes is hangwatch's, not the job's
            import ctypes

            ctypes.CDLL(None).prctl(15, b"hangwatch-flight"[:15], 0, 0, 0)  # PR_SET_NAME
        except Exception:  # noqa: BLE001, S110 - a name is a nicety
            pass
        while True:
            try:
                with open(fifo, "rb") as f:  # blocks until hangwatch opens it for writing
                    f.read(64)
                tmp = f"{out}.tmp"
                with open(tmp, "wb") as f:
                    f.write(_fr_dump())
                os.replace(tmp, out)
            except Exception:  # noqa: BLE001 - a dump that fails is a rank that does not answer
                time.sleep(1.0)

    threading.Thread(target=loop, name="hangwatch-flight", daemon=True).start()


def _serve_flight(beats: _Beats) -> None:
    """After init_process_group: start this rank's reader of the flight recorder and say where it is."""
    how = os.environ.get(FR_ENV, "1")
    if how == "0":
        return
    c10d: Any = sys.modules.get("torch._C._distributed_c10d")
    server = getattr(c10d, "_WorkerServer", None) if how != "fifo" else None
    base = os.path.join(beats.directory, f"flight-{os.getpid()}")
    _dump_lock()  # made here, by one thread, before any request can come
    sock = _socket_path(beats.directory) if server is not None else None
    if sock is None:
        server = None  # no path short enough for a unix socket: the FIFO, whose path has no such limit
    if beats.flight is not None:  # a process group made again: the same reader, a new start for its entries
        entry = beats.flight_entry
    elif server is not None and sock is not None:
        import pickle  # noqa: F401 - now, not at the first request: the handler's answer has 2 s on a busy machine

        path = sock
        if os.path.exists(path):
            os.unlink(path)
        register = getattr(c10d, "_register_handler", None)
        if register is not None and FR_HANDLER not in c10d._get_handler_names():
            register(FR_HANDLER, _fr_handler)
        beats.flight = server(path, -1)  # kept: the server lives as long as this object
        os.chmod(path, 0o600)
        import atexit

        # Stopped while the interpreter and torch are whole: left to the interpreter's teardown, the server's
        # thread was seen to abort the process ("FATAL: exception not rethrown", exit -6) on a busy machine.
        atexit.register(_stop_flight, beats)
        entry = {"kind": "server", "socket": path}
    else:
        fifo = base + ".fifo"
        if not _FIFO_READER:  # one reader a process: after a destroy and a new group, the same one reads on
            if os.path.exists(fifo):
                os.unlink(fifo)
            os.mkfifo(fifo, 0o600)
            _fifo_thread(fifo, base + ".dump.json")
            _FIFO_READER.append(fifo)
        beats.flight = fifo
        entry = {"kind": "fifo", "fifo": fifo, "dump": base + ".dump.json"}
    beats.flight_entry = entry
    entry.update({"pid": os.getpid(), "rank": _dist_rank(), "at": time.time()})
    tmp = base + ".json.tmp"
    with open(tmp, "w") as f:
        json.dump(entry, f)
    os.replace(tmp, base + ".json")


SUN_PATH_MAX = 107  # bytes of a unix socket's path (sun_path is 108 with its NUL); a longer one is cut short


def _letters(n: int) -> str:
    """A number as letters (``10896`` -> ``baijg``)."""
    return "".join(chr(97 + int(d)) for d in str(n))


def _socket_path(directory: str) -> str | None:
    """Where this rank's worker server listens: the heartbeat directory, or, where that path is too long for a
    unix socket (a deep run directory; the server would bind a name cut short and nobody could reach it), a
    directory of this user's own (mode 0700) under the system's temporary directory; None when neither fits.
    The name has no digits: torch prints it once per rank, and a number that grows from one rank's line to the
    next would read as a progress counter."""
    import tempfile

    name = f"flight-{_letters(os.getpid())}.sock"
    here = os.path.join(directory, name)
    if len(os.fsencode(here)) <= SUN_PATH_MAX:
        return here
    private = os.path.join(tempfile.gettempdir(), f"hangwatch-{_letters(os.getuid())}")
    try:
        os.makedirs(private, mode=0o700, exist_ok=True)
        st = os.lstat(private)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # not a directory of this user's alone: a socket there could be reached by others
    there = os.path.join(private, name)
    return there if len(os.fsencode(there)) <= SUN_PATH_MAX else None


def _reader_reset() -> None:
    """After fork: the child has no reader of its own yet, and the parent's locks may have been held."""
    for state in (_DUMP_LOCKS, _CLOSING, _LEFT, _FIFO_READER):
        state.clear()
    _CALLS[:] = [0, 0.0]


def _stop_flight(beats: _Beats) -> None:
    """Shut this rank's reader down before its process group or the interpreter goes.

    torch's ``_WorkerServer.shutdown`` joins the server's threads while holding the GIL, and our handler needs
    the GIL: shut down while a request of hangwatch's is being answered, the job never exits (seen: a rank
    stuck in ``std::thread::join``). So nothing may be asked any more (the registry says ``closed`` and the socket
    is removed first, and a handler that starts answers at once), a request already connected gets the GIL to
    finish (waited for, the GIL free: none running and none begun for 0.1 s since the socket went, at most 10 s),
    and only then the server is shut down; one whose handler never returns is left as it is."""
    if not _CLOSING:
        _CLOSING.append(True)
    server, beats.flight = beats.flight, None
    if server is None:
        return
    base = os.path.join(beats.directory, f"flight-{os.getpid()}")
    try:  # kept, closed: what the rank served stays on record
        with open(base + ".json.tmp", "w") as f:
            json.dump({**beats.flight_entry, "kind": "closed", "was": beats.flight_entry.get("kind")}, f)
        os.replace(base + ".json.tmp", base + ".json")
    except OSError:
        pass
    sock = beats.flight_entry.get("socket")
    if isinstance(sock, str):
        try:
            os.unlink(sock)
        except OSError:
            pass
    closed = time.monotonic()
    deadline = closed + 10.0
    while time.monotonic() < deadline and (_CALLS[0] or time.monotonic() - max(_CALLS[1], closed) < 0.1):
        time.sleep(0.01)  # the GIL free: a request connected before the socket went reaches the handler and leaves
    if _CALLS[0]:  # a dump that does not end: shut down now and the rank never exits; left to the OS instead
        _LEFT.append(server)
        return
    if hasattr(server, "shutdown"):
        try:
            server.shutdown()
        except Exception:  # noqa: BLE001, S110 - the job is exiting; nothing more to do
            pass


def _attach_distributed(beats: _Beats, dist: Any) -> None:
    """Wrap init_process_group (torch.distributed's and distributed_c10d's: the same function) so that the
    flight recorder's reader starts once a process group exists."""
    original = getattr(dist, "init_process_group", None)
    if original is None or getattr(original, "_hangwatch", False) or os.environ.get(FR_ENV, "1") == "0":
        return

    @functools.wraps(original)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        _CLOSING.clear()  # a process group made again (after a destroy): its recorder may be read
        try:
            _serve_flight(beats)
        except Exception:  # noqa: BLE001, S110 - the recorder is evidence, never a reason to break the job
            pass
        return result

    init_process_group._hangwatch = True  # type: ignore[attr-defined]
    dist.init_process_group = init_process_group
    c10d = getattr(dist, "distributed_c10d", None)
    if c10d is not None and getattr(c10d, "init_process_group", None) is original:
        c10d.init_process_group = init_process_group
    destroy = getattr(dist, "destroy_process_group", None)
    if destroy is None or getattr(destroy, "_hangwatch", False):
        return

    @functools.wraps(destroy)
    def destroy_process_group(group: Any = None, *args: Any, **kwargs: Any) -> Any:
        world = getattr(getattr(dist, "GroupMember", None), "WORLD", None)
        every = group is None or (world is not None and group is world)  # torch destroys every group for both
        if every:  # the recorder's entries go with them: the reader goes first
            try:
                _stop_flight(beats)
            except Exception:  # noqa: BLE001, S110 - never a reason to break the job
                pass
        try:
            return destroy(group, *args, **kwargs)
        except BaseException:
            if every:  # the groups are still there: so is the reader
                _CLOSING.clear()
                try:
                    _serve_flight(beats)
                except Exception:  # noqa: BLE001, S110
                    pass
            raise

    destroy_process_group._hangwatch = True  # type: ignore[attr-defined]
    dist.destroy_process_group = destroy_process_group
    if c10d is not None and getattr(c10d, "destroy_process_group", None) is destroy:
        c10d.destroy_process_group = destroy_process_group


WATCH: dict[str, Callable[[_Beats, Any], None]] = {
    "torch": _attach_torch,
    "torch.distributed": _attach_distributed,
    "torch._dynamo.callback": _attach_dynamo,
    "torch.distributed.checkpoint": _attach_dcp,
    "lightning.pytorch.loops.evaluation_loop": _attach_lightning,
    "pytorch_lightning.loops.evaluation_loop": _attach_lightning,
    "transformers.trainer": _attach_transformers,
    "transformers.trainer_callback": _attach_transformers_callbacks,
    "lightning.pytorch.loops.fit_loop": _attach_lightning_fit,
    "lightning.pytorch.trainer.trainer": _attach_lightning_trainer,
    "pytorch_lightning.trainer.trainer": _attach_lightning_trainer,
    "pytorch_lightning.loops.fit_loop": _attach_lightning_fit,
}


class _Loader:
    """The real loader; after it has run the module, attach what is watched for it."""

    def __init__(
        self, loader: Any, attach: Callable[[_Beats, Any], None], beats: _Beats, pending: dict[str, Any], name: str
    ) -> None:
        self._loader = loader
        self._attach = attach
        self._beats = beats
        self._pending = pending
        self._name = name

    def create_module(self, spec: Any) -> ModuleType | None:
        """The real loader's."""
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Run the module, then attach (once: importlib.util.find_spec probes may come before)."""
        self._loader.exec_module(module)
        if self._pending.pop(self._name, None) is None:
            return
        try:
            self._attach(self._beats, module)
        except Exception:  # noqa: BLE001, S110 - private torch APIs move: no beats from there, never a broken job
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _Finder:
    """A meta path finder that only wraps the loaders of the watched modules, once each."""

    def __init__(self, beats: _Beats) -> None:
        self.beats = beats
        self.pending = dict(WATCH)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        """The real spec of a watched module, its loader wrapped; None for everything else."""
        attach = self.pending.get(name)
        if attach is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module") and not isinstance(spec.loader, _Loader):
            spec.loader = _Loader(spec.loader, attach, self.beats, self.pending, name)  # type: ignore[assignment]
        return spec


# --- births: hangwatch looks at the job's tree every 2 s; a worker that starts and dies between two looks (a pool
# worker the OOM killer ends a second in) would go unseen, and its lost task unexplained. So each Python process
# of the job says it started, at its start and after each fork: heartbeat/born/<pid>-<start ticks> holds its
# parent, its name and its command line. hangwatch reads and removes each record at its next look.
def _born(directory: str) -> None:
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        with open("/proc/self/cmdline", "rb") as f:
            cmdline = f.read()
        comm = stat[stat.index(b"(") + 1 : stat.rindex(b")")]
        fields = stat[stat.rindex(b")") + 2 :].split()
        ppid, ticks = fields[1].decode(), fields[19].decode()  # stat's 4th and 22nd fields
        born = os.path.join(directory, "born")
        tmp = os.path.join(born, f".{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, ppid.encode() + b"\n" + comm.replace(b"\n", b" ") + b"\n" + cmdline)
        finally:
            os.close(fd)
        os.rename(tmp, os.path.join(born, f"{os.getpid()}-{ticks}"))  # whole, or not there
    except (OSError, ValueError, IndexError):
        pass


def _install() -> None:
    directory = os.environ.get("HANGWATCH_HEARTBEAT_DIR")
    if not directory or os.environ.get("HANGWATCH_AUTOBEAT", "1") == "0":
        return
    try:
        timeout = float(os.environ.get("HANGWATCH_PHASE_TIMEOUT", "1800"))
    except ValueError:
        timeout = 1800.0
    beats = _Beats(directory, timeout)
    _born(directory)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=beats.reset)
        os.register_at_fork(after_in_child=_reader_reset)
        os.register_at_fork(after_in_child=functools.partial(_born, directory))
    sys.meta_path.insert(0, _Finder(beats))


_chain()
try:
    _install()
except Exception:  # noqa: BLE001, S110 - a heartbeat must never break the job
    pass
