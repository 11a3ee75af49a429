"""The batch each DataLoader worker holds, read from the files the job's autobeat hook keeps
(``heartbeat/<pid>-<n>.dl``, written by ``_LoaderTasks`` and ``_WorkerSlot`` in
hangwatch/_autobeat/_hangwatch_hook/batches.py).

Memory-mapped files, read with no help from the job (its main process may be stuck): a header, then one slot per
worker with a sequence number that is odd while the hook writes it; a slot is taken when two reads agree on it and
its number is even, read again (a few times) otherwise, then left out alone.
"""

from __future__ import annotations

import struct
import time
from pathlib import Path

from hangwatch.records.evidence import LoaderTask
from hangwatch.records.layout import loader_files

MAGIC = 0x314C5748  # "HWL1"
HEADER = struct.Struct("<IIIi48s")  # magic, workers, iterable (0/1), flags (1: healable), dataset class name
HEALABLE = 1
SLOT = struct.Struct("<QIIqddI4x")  # sequence, worker pid, indices in the batch, batch, sent, since, kept
INDICES = 64
SLOT_SIZE = SLOT.size + 8 * INDICES
MAX_WORKERS = 4096
TRIES = 5


def read_loader_file(path: Path) -> list[LoaderTask]:
    """The workers' batches one iterator recorded; [] where the file is missing, short or not one of ours. A slot
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
    dataset = name.rstrip(b"\0").decode(errors="replace")
    settled: dict[int, bytes] = {}
    for attempt in range(TRIES):
        try:
            second = path.read_bytes()
        except OSError:
            break
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
