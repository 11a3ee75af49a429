"""Each multiprocessing DataLoader iterator's record of its workers' batches, and heal where it is on: the
wrappers of torch's iterator that start, reset and end them.

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import functools
from typing import Any

from .batches import _RECORD_ERRORS, _LoaderTasks, _record_puts
from .heal import _dataset_key, _heal_for, _heal_if_asked, _Healer
from .slot import _Beats


def _start_tasks(beats: _Beats, it: Any) -> _LoaderTasks | None:
    """The record of a new iterator's workers, its index queues wrapped; None where it cannot be made."""
    t = None
    try:
        t = _LoaderTasks(beats.directory, it)
        if _Healer.left > 0 or _Healer.skipped:  # before torch's first batches: a sample left out is never sent again
            t.skip = _Healer.skipped.setdefault(_dataset_key(it._dataset), set())
        _record_puts(t, it)
    except Exception:  # noqa: BLE001 - no record of its batches, never a broken job
        it.__dict__["_hangwatch_failed"] = True
        if t is not None:
            t.close()
        return None
    it.__dict__["_hangwatch_tasks"] = t
    return t


def _attach_loader_tasks(beats: _Beats, dataloader: Any) -> None:
    """Where heal is on (or samples an earlier heal left out stay out), record, per worker of each multiprocessing
    DataLoader iterator, the batch and sample indices it holds. Elsewhere nothing is recorded a batch: a look reads
    a stuck worker's batch from its locals."""
    _heal_if_asked(dataloader)
    if _Healer.left <= 0 and not _Healer.skipped:
        return
    mp = dataloader._MultiProcessingDataLoaderIter
    stop = getattr(getattr(dataloader, "_utils", None), "worker", None)
    stop = getattr(stop, "_IterableDatasetStopIteration", None)
    mp._reset = _recorded_reset(beats, mp._reset)
    mp._shutdown_workers = _closed_with_workers(mp._shutdown_workers)
    mp._get_data = _recorded_get(mp._get_data, stop)


def _recorded_reset(beats: _Beats, reset: Any) -> Any:
    """torch's ``_reset``: an iterator's first makes its record (and heal's watch, where heal is on); a later one
    (a new epoch, persistent workers) keeps the last epoch's batches recorded until torch has them back."""

    @functools.wraps(reset)
    def _reset(self: Any, *args: Any, **kwargs: Any) -> Any:
        t: _LoaderTasks | None = self.__dict__.get("_hangwatch_tasks")
        if t is None:
            if self.__dict__.get("_workers") and not self.__dict__.get("_hangwatch_failed"):
                t = _start_tasks(beats, self)
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

    return _reset


def _recorded_get(get: Any, stop: Any) -> Any:
    """torch's ``_get_data``: each batch back is written, and one a replaced worker had flushed as it was ended is
    skipped (here, or handed out, already)."""

    @functools.wraps(get)
    def _get_data(self: Any) -> Any:
        got = get(self)
        while (
            "_hangwatch_healer" in self.__dict__ and type(got[0]) is int and len(self._task_info.get(got[0], ())) != 1
        ):
            got = get(self)
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

    return _get_data


def _closed_with_workers(shutdown: Any) -> Any:
    """torch's ``_shutdown_workers``: the iterator's record goes with its workers."""

    @functools.wraps(shutdown)
    def _shutdown_workers(self: Any) -> Any:
        t = self.__dict__.pop("_hangwatch_tasks", None)
        try:
            return shutdown(self)
        finally:
            if t is not None:
                t.close()

    return _shutdown_workers
