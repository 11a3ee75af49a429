"""Checkpoint hand-off: the checkpoints the job wrote (autobeat appends them to
``<heartbeat dir>/checkpoints.jsonl``), the newest one passed to a restart through ``{checkpoint}`` and
``{checkpoint_step}`` in ``--fallback`` arguments and environment and in ``--resume-arg``, and the steps
a resumed attempt does again."""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hangwatch.recover.fallback import parse_fallback

log = logging.getLogger(__name__)

PLACEHOLDERS = ("{checkpoint}", "{checkpoint_step}")
READ_MAX = 1 << 20  # bytes read per poll: a job saving thousands of files a second is not ours to keep up with


@dataclass(frozen=True)
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


def uses_checkpoint(text: str) -> bool:
    """Whether a fallback or --resume-arg names the checkpoint."""
    return any(p in text for p in PLACEHOLDERS)


def fill(text: str, ckpt: Checkpoint | None) -> str | None:
    """``text`` with the placeholders replaced; None when it has one and no checkpoint (or step) is known."""
    if not uses_checkpoint(text):
        return text
    if ckpt is None or ("{checkpoint_step}" in text and ckpt.step is None):
        return None
    return text.replace("{checkpoint}", ckpt.path).replace("{checkpoint_step}", str(ckpt.step))


def fill_args(text: str, ckpt: Checkpoint | None) -> str:
    """A fallback's options with the placeholders replaced; an option whose value names a checkpoint that
    is not known is left out (the rest of the fallback still applies)."""
    kept = []
    for name, value, eq in parse_fallback(text):
        filled = fill(value, ckpt) if value is not None else None
        if value is not None and filled is None:
            continue
        if filled is None:
            kept.append(shlex.quote(name))
        elif eq:
            kept.append(shlex.quote(f"{name}={filled}"))
        else:
            kept += [shlex.quote(name), shlex.quote(filled)]
    return " ".join(kept)


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
