"""The batch each DataLoader worker holds, read from the files the job's autobeat hook keeps
(``heartbeat/<pid>-<n>.dl``, written by ``_LoaderTasks`` in hangwatch/_autobeat/sitecustomize.py).

Memory-mapped files, read with no help from the job (its main process may be stuck): a header, then one slot per
worker with a sequence number that is odd while the hook writes it; a slot read while odd, or that changed under
the read, is read again (a few times), then left out.
"""

from __future__ import annotations

import struct
from pathlib import Path

from hangwatch.records.evidence import LoaderTask
from hangwatch.records.layout import loader_files

MAGIC = 0x314C5748  # "HWL1"
HEADER = struct.Struct("<IIIi48s")  # magic, workers, iterable (0/1), pad, dataset class name
SLOT = struct.Struct("<QIIqddI4x")  # sequence, worker pid, indices in the batch, batch, sent, since, kept
INDICES = 64
SLOT_SIZE = SLOT.size + 8 * INDICES
MAX_WORKERS = 4096
TRIES = 5


def read_loader_file(path: Path) -> list[LoaderTask]:
    """The workers' batches one iterator recorded; [] where the file is missing, short or not one of ours."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    tasks = _parse(data)
    if tasks is None:  # a slot was being written: read again
        for _ in range(TRIES):
            try:
                tasks = _parse(path.read_bytes())
            except OSError:
                return []
            if tasks is not None:
                break
    return tasks or []


def _parse(data: bytes) -> list[LoaderTask] | None:
    if len(data) < HEADER.size:
        return []
    magic, workers, iterable, _, name = HEADER.unpack_from(data, 0)
    if magic != MAGIC or not 0 < workers <= MAX_WORKERS or len(data) < HEADER.size + workers * SLOT_SIZE:
        return []
    dataset = name.rstrip(b"\0").decode(errors="replace")
    out = []
    for w in range(workers):
        off = HEADER.size + w * SLOT_SIZE
        seq, pid, count, batch, sent, since, kept = SLOT.unpack_from(data, off)
        if seq % 2:
            return None
        kept = min(kept, INDICES)
        indices = struct.unpack_from(f"<{kept}q", data, off + SLOT.size)
        if pid:
            out.append(LoaderTask(pid, w, batch, count, tuple(indices), sent, since, bool(iterable), dataset))
    return out


def loader_tasks(heartbeat_dir: str | None, pid: int) -> dict[int, LoaderTask]:
    """Worker pid -> the batch it holds, over every DataLoader iterator process ``pid`` recorded."""
    if not heartbeat_dir:
        return {}
    out: dict[int, LoaderTask] = {}
    for path in loader_files(Path(heartbeat_dir), pid):
        for t in read_loader_file(path):
            out[t.worker_pid] = t
    return out
