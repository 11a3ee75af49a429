"""Checkpoint hand-off: the checkpoints the job wrote (autobeat appends them to
``<heartbeat dir>/checkpoints.jsonl``), and the steps a resumed attempt does again. The newest one is passed to
a restart through ``{checkpoint}`` and ``{checkpoint_step}`` (job/plan.py)."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from hangwatch.records.values import frozen

log = logging.getLogger(__name__)

READ_MAX = 1 << 20  # bytes read per poll: a job saving thousands of files a second is not ours to keep up with


@frozen
class Checkpoint:
    """One checkpoint the job wrote: where, at which step (the job's own counter), by whom."""

    at: float
    path: str
    step: int | None
    kind: str  # torch.save | dcp | lightning | transformers
    attempt: int
    rank: int = -1

    def to_dict(self) -> dict[str, Any]:
        """For events and summary.json."""
        return {
            "at": round(self.at, 3),
            "path": self.path,
            "step": self.step,
            "source": self.kind,
            "attempt": self.attempt,
            "rank": self.rank,
        }


class CheckpointLog:
    """Reads the lines the job appends, as they come (a partial last line waits for its end)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""

    def poll(self) -> list[dict[str, Any]]:
        """The records appended since the last poll."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(READ_MAX)
        except OSError:
            return []
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        out = []
        for line in lines:
            try:
                rec = json.loads(line)
                if isinstance(rec, dict) and isinstance(rec.get("path"), str):
                    out.append(rec)
            except ValueError:
                log.warning("ignoring a malformed line in %s", self.path)
        return out


def redone_steps(previous_last: int | None, first: int | None) -> int:
    """Steps an attempt does again: from its first step up to where the previous attempt had got."""
    if previous_last is None or first is None:
        return 0
    return max(0, previous_last - (first - 1))


def save_step(path: str, at: float, points: list[tuple[float, int]]) -> int | None:
    """The job's step at a save made at ``at``, from its progress ``points`` (time, step). A poll sees
    only the newest step, so the save lies between the last step seen before it and the first seen
    after; a number in the file name within those bounds is taken (``ckpt-10.pt``, ``step=10.ckpt``),
    else the last step seen before it."""
    before = [s for t, s in points if t <= at]
    after = [s for t, s in points if t > at]
    lo = before[-1] if before else None
    hi = after[0] if after else lo
    if hi is None:
        return None
    named = [int(n) for n in re.findall(r"\d+", os.path.basename(path.rstrip("/")))]
    fits = [n for n in named if (lo if lo is not None else 0) <= n <= hi]
    return max(fits) if fits else lo
