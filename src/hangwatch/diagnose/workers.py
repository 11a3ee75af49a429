"""A DataLoader worker in words: what its stack says it does, the batch it holds (from the hook's record, capture/
loader.py) and the sample its dataset's locals name. The DataLoader rules (diagnose/dataloader.py), the distributed
ones, the incident's process list and heal quote them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hangwatch import signatures as sg
from hangwatch.diagnose.views import ProcessView, ThreadView
from hangwatch.records.evidence import Frame, LoaderTask, LocalsRead

if TYPE_CHECKING:
    from hangwatch.diagnose.scene import Scene


def _stack_state(frames: tuple[Frame, ...]) -> str:
    loop = next((i for i, f in enumerate(frames) if sg.at(f, sg.WORKER_PY, sg.WORKER_LOOP)), None)
    if loop is None:
        return "unknown"
    above = frames[:loop]
    if any(sg.at(f, sg.FETCH_PY) or sg.at(f, sg.COLLATE_PY) or sg.is_user(f) for f in above):
        return "busy"
    return "idle"


def busy_worker(scene: Scene, v: ProcessView, t: ThreadView) -> tuple[ProcessView, ThreadView] | None:
    """Where thread ``t`` of ``v`` waits in a DataLoader's iterator for its next batch: the first of its workers that
    is busy (``worker_state``), with its main thread; None otherwise."""
    if not any(sg.at(f, sg.DATALOADER_PY, sg.LOADER_WAIT_METHODS) for f in t.frames):
        return None
    return next(
        ((w, wt) for w in scene.workers_of(v.pid) if (wt := w.main_thread) is not None and worker_state(wt) == "busy"),
        None,
    )


def worker_state(t: ThreadView) -> str:
    """'busy' (in dataset/collate/init code in any stack read of the window), 'idle' (waiting for an index in
    every one) or 'unknown'. The window decides, not the last sample: a worker caught between two batches of a
    sleepy ``__getitem__`` is at work (calling it idle made a healthy job a lost batch, hung)."""
    states = {_stack_state(st) for st in t.stacks}
    if "busy" in states:
        return "busy"
    return "idle" if states == {"idle"} else "unknown"


def busy_frames(t: ThreadView) -> tuple[Frame, ...]:
    """The newest stack read that found the worker in its dataset, collate or init code (else the newest)."""
    return next((st for st in reversed(t.stacks) if _stack_state(st) == "busy"), t.frames)


def indices_text(t: LoaderTask) -> str:
    """``sample indices 48213-48244`` (an en dash between), ``sample indices 3, 17, 942 (3 in all)``,
    ``sample index 7``."""
    ix = t.indices
    if not ix:
        return "samples not read" if t.count < 0 else f"{t.count} samples" if t.count != 1 else "1 sample"
    if len(ix) == 1 and t.count == 1:
        return f"sample index {ix[0]}"
    run = list(ix) == list(range(ix[0], ix[0] + len(ix)))
    if run and len(ix) == t.count:
        return f"sample indices {ix[0]}\u2013{ix[-1]}"
    if t.count < 0:  # more than were read (py-spy shows a list's first items)
        return (
            f"sample indices {ix[0]}\u2013{ix[-1]} and more"
            if run and len(ix) > 1
            else f"sample indices {', '.join(str(i) for i in ix[:8])}, ... (more than {len(ix)})"
        )
    shown = ", ".join(str(i) for i in ix[:8])
    return f"sample indices {shown}{', ...' if t.count > 8 else ''} ({t.count} in all)"


def held_batch(w: ProcessView) -> str | None:
    """What a worker holds, as its DataLoader iterator recorded it (autobeat, under `hangwatch run --on-hang heal`):
    ``has held batch 1507 (sample indices 48213-48244 of Shards) for 45 s``; or as its own loop's locals showed it
    at the look: ``holds batch 1507 (...)``, since when not known; None where neither was read."""
    t = w.ev.loader_task
    if t is None:
        return None
    if t.batch < 0:
        return "holds no batch: it returned every batch it was sent"
    if t.iterable:
        what = f"batch {t.batch} of {t.dataset or 'its dataset'}, an IterableDataset (no sample indices)"
    else:
        what = f"batch {t.batch} ({indices_text(t)} of {t.dataset or 'its dataset'})"
    if t.from_locals:  # what its loop's locals showed at the look, nothing of what was sent to it
        return f"holds {what}"
    if w.main_thread is not None and worker_state(w.main_thread) == "idle":
        # It waits for work: the oldest batch it was sent is done, and waits for the main process to take it.
        return f"is done with its batches; {what} waits for the main process to take it"
    return f"has held {what} for {max(0.0, w.ev.samples[-1].at - t.since):.0f} s"


# A local of the dataset's code that says which sample it is on: a path, a URL, a key; by its name or its value.
SAMPLE_NAMES = re.compile(r"^(?:path|file|filename|fname|fn|uri|url|key|name|shard|image_path|img_path|sample_path)$")


SAMPLE_INDEX_NAMES = frozenset({"i", "idx", "index", "item", "sample_idx", "sample_index"})


SAMPLE_VALUE = re.compile(r"^['\"](?:/|~/|\./|[a-z][a-z0-9+.-]*://)[^'\"]{2,}['\"]$")


def sample_named(w: ProcessView, t: ThreadView) -> str | None:
    """What the sample a worker is on is, where the locals of its dataset code show it:
    ``path='/mnt/shards/shard-0042.bin' in Shards.__getitem__``; None where they do not. Only a worker in its
    dataset's fetch (not in collate_fn, whose loop variables are no sample), only string values for a name, and an
    index only where it is one of the batch's recorded indices (or none were recorded)."""
    if not any(sg.at(f, sg.FETCH_PY) for f in busy_frames(t)):
        return None
    return sample_in(w.locals_of(t.tid), w.ev.loader_task)[1]


def sample_in(reads: Sequence[LocalsRead], task: LoaderTask | None) -> tuple[int | None, str | None]:
    """The sample index and what the sample is (``index 42, path='/mnt/...' in Shards.__getitem__ (train.py:9)``),
    from the newest locals read that shows either; (None, None) where none does. An index counts only where it is
    one of the batch's recorded indices (or none were recorded)."""
    known = set(task.indices) if task is not None and task.indices and task.count == len(task.indices) else None
    for r in reversed(reads):
        named = [(n, v) for n, v in r.values if SAMPLE_NAMES.match(n) and v[:1] in "'\""]
        looks = [(n, v) for n, v in r.values if SAMPLE_VALUE.match(v)]
        picked = next(iter(named + looks), None)
        index = next(
            (v for n, v in r.values if n in SAMPLE_INDEX_NAMES and v.isdigit() and (known is None or int(v) in known)),
            None,
        )
        said = ([f"index {index}"] if index is not None else []) + ([f"{picked[0]}={picked[1]}"] if picked else [])
        if said:
            return (
                int(index) if index is not None else None
            ), f"{', '.join(said)} in {r.function} ({Path(r.file).name}:{r.line})"
    return None, None
