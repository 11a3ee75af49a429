"""Heal in place (``hangwatch run --on-hang heal``): a stuck DataLoader worker replaced, its batches handed again.

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import time
from typing import Any, ClassVar

from .batches import _RECORD_ERRORS, LOADER_HEALABLE, LOADER_SUFFIX, _LoaderTasks, _record_put

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
            skipped, dropped = _leave_out(held, sample)
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
        t.since[w] = time.time()
        t.flush()
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
    """--on-hang heal: a main process waiting for a batch writes its record of the batches (``_LoaderTasks.flush``)
    and looks for hangwatch's request twice a second; a heal that
    changed the tasks starts torch's ``_next_data`` again; torch's SIGCHLD error is off for healable iterators."""
    mp = dataloader._MultiProcessingDataLoaderIter
    try_get, next_data = mp._try_get_data, mp._next_data
    signals = dataloader._utils.signal_handling

    @functools.wraps(try_get)
    def _try_get_data(self: Any, timeout: float = 5.0) -> Any:
        h: _Healer | None = self.__dict__.get("_hangwatch_healer")
        t: _LoaderTasks | None = self.__dict__.get("_hangwatch_tasks")
        if t is None:
            return try_get(self, timeout)
        end = time.monotonic() + timeout
        while True:
            try:
                got = try_get(self, max(0.0, min(HEAL_POLL_S, end - time.monotonic())))
            except RuntimeError:
                if h is None or not h.dead(self, t):
                    raise
                raise _Redo from None
            except (OSError, EOFError):  # a batch whose worker died as it was fetched: its shared memory is gone
                if h is None or not h.dead(self, t, wait=2.0):
                    raise
                raise _Redo from None
            if got[0]:
                return got
            if not t.current:  # it waits for a batch: the record written, for a look to read (not at every batch;
                with contextlib.suppress(*_RECORD_ERRORS):  # an iterator heal does not apply to too: the look says why)
                    t.flush()
            if h is not None and h.poll(self, t):
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


def _leave_out(held: list[tuple[int, Any]], sample: Any) -> tuple[list[Any], int | None]:
    """A batch that hung twice (``held[0]``): its sample ``sample`` left out of it (``held[0]`` rewritten), or, where
    that sample is not one of its indices, the whole batch dropped. The samples left out, and the batch dropped."""
    first, ix = held[0]
    listed = type(ix) in (list, tuple)
    rest = [i for i in ix if i != sample] if listed and sample is not None and sample in ix else None
    if rest:
        held[0] = (first, type(ix)(rest))
        return [sample], None
    if _distributed():
        raise _NotHealed("dropping a batch in one rank would leave the ranks a step apart")
    return [_plain(i) for i in (ix if listed else [ix])], first


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
    t.set_flags(t.flags | LOADER_HEALABLE)  # the record says so: hangwatch asks only then
