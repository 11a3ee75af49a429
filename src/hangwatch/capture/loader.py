"""The batch each DataLoader worker holds: read from the files the job's autobeat hook keeps where heal is on
(``heartbeat/<pid>-<n>.dl``, written by ``_LoaderTasks`` in hangwatch/_autobeat/_hangwatch_hook/batches.py), or
from the locals of the worker's own loop (``task_from_locals``), which need nothing of the job.

Memory-mapped files, read with no help from the job (its main process may be stuck): a header, then one slot per
worker with a sequence number that is odd while the hook writes it; a slot is taken when two reads agree on it and
its number is even, read again (a few times) otherwise, then left out alone.
"""

from __future__ import annotations

import re
import struct
import time
from pathlib import Path

from hangwatch.records.evidence import LoaderTask, LocalsRead
from hangwatch.records.layout import loader_files

MAGIC = 0x314C5748  # "HWL1"
HEADER = struct.Struct("<IIIi48s")  # magic, workers, iterable (0/1), flags (1: healable), dataset class name
HEALABLE, CURRENT = 1, 2  # flags: its workers can be healed; its slots are current (written while main waits)
SLOT = struct.Struct("<QIIqddI4x")  # sequence, worker pid, indices in the batch, batch, sent, since, kept
INDICES = 64
SLOT_SIZE = SLOT.size + 8 * INDICES
MAX_WORKERS = 4096
TRIES = 5


def read_loader_file(path: Path, current: bool = True) -> list[LoaderTask]:
    """The workers' batches one iterator recorded; [] where the file is missing, short, not one of ours, or not
    current (its main process has not waited for a batch since batches last moved: a look reads the locals; ``current``
    False: as last written, current or not). A slot
    is taken only when two reads in a row agree on it and its sequence number is even (no write under way); one
    that never settles (a few tries, a millisecond apart) is left out, the others kept."""
    try:
        first = path.read_bytes()
    except OSError:
        return []
    if len(first) < HEADER.size:
        return []
    magic, workers, iterable, flags, name = HEADER.unpack_from(first, 0)
    if magic != MAGIC or not 0 < workers <= MAX_WORKERS or len(first) < HEADER.size + workers * SLOT_SIZE:
        return []
    if current and not flags & CURRENT:  # batches moved since its main process wrote it (it writes them when it waits)
        return []
    dataset = name.rstrip(b"\0").decode(errors="replace")
    settled: dict[int, bytes] = {}
    for attempt in range(TRIES):
        try:
            second = path.read_bytes()
        except OSError:
            break
        if current and (len(second) < HEADER.size or not HEADER.unpack_from(second, 0)[3] & CURRENT):
            return []  # a batch moved while it was read
        for w in range(workers):
            lo, hi = HEADER.size + w * SLOT_SIZE, HEADER.size + (w + 1) * SLOT_SIZE
            slot = second[lo:hi]
            if w not in settled and slot == first[lo:hi] and len(slot) == SLOT_SIZE and slot[0] % 2 == 0:
                settled[w] = slot
        if len(settled) == workers:
            break
        first = second
        if attempt + 1 < TRIES:
            time.sleep(0.001)
    out = []
    for w in sorted(settled):
        _, pid, count, batch, sent, since, kept = SLOT.unpack_from(settled[w], 0)
        kept = min(kept, INDICES)
        indices = struct.unpack_from(f"<{kept}q", settled[w], SLOT.size)
        if pid and not (batch < 0 and since == 0.0):  # a slot nobody wrote since the file was made: not recorded
            healable = bool(flags & HEALABLE)
            out.append(LoaderTask(pid, w, batch, count, tuple(indices), sent, since, bool(iterable), dataset, healable))
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


INT = re.compile(r"-?[0-9]+")
OBJECT_REPR = re.compile(r"^<([A-Za-z_][\w.]*) at 0x[0-9a-f]+>$")  # py-spy's repr of an object: <Shards at 0x7f...>


def task_from_locals(pid: int, read: LocalsRead) -> LoaderTask | None:
    """The batch worker ``pid`` holds, from the locals of torch's ``_worker_loop`` (``idx``: the batch; ``index``:
    its sample indices, a list py-spy shows the first items of, about 128 characters; ``worker_id``, ``dataset``,
    ``dataset_kind``); None where the batch number is not there (the worker between two batches)."""
    values = dict(read.values)
    batch, worker = values.get("idx", ""), values.get("worker_id", "")
    if not INT.fullmatch(batch) or not INT.fullmatch(worker):
        return None
    index = values.get("index", "None").strip()
    indices: tuple[int, ...] = ()
    count = 0
    if index.startswith(("[", "(")) and not any(c in index[1:] for c in "[(<{"):  # a flat list or tuple
        whole = "..." not in index
        items = [x.strip() for x in index[1:].rstrip("])").split(",")]
        if not index.endswith(("]", ")")):  # cut short in the capture: its last number may be part of one
            items = items[:-1]
        items = [x for x in items if x and x != "..."]
        if all(INT.fullmatch(x) for x in items):
            indices = tuple(int(x) for x in items)
        count = len(items) if whole else -1  # keys of a custom sampler: their count only
    elif INT.fullmatch(index):  # a sampler of single indices (batch_size=None)
        indices, count = (int(index),), 1
    elif index != "None":  # a tensor, nested lists: the numbers are not read
        count = -1
    m = OBJECT_REPR.match(values.get("dataset", ""))
    return LoaderTask(
        worker_pid=pid,
        worker_id=int(worker),
        batch=int(batch),
        count=count,
        indices=indices,
        sent=0.0,
        since=0.0,
        iterable=values.get("dataset_kind") == "1",
        dataset=m.group(1).rsplit(".", 1)[-1] if m else "",
        from_locals=True,
    )
