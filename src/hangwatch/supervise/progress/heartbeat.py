"""Reading the heartbeat slots that ``hangwatch.beat`` writes (one file per process)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

from hangwatch.beat import BEAT, BEAT_OFFSET, HEADER, MAGIC, PHASE, PHASE_OFFSET, SLOT_SIZE
from hangwatch.records.layout import BEAT_SUFFIX
from hangwatch.records.values import frozen


@frozen
class Heartbeat:
    """One process's heartbeat slot."""

    pid: int
    rank: int | None
    at: float  # unix time of the last beat (0: none yet)
    step: int | None
    count: int
    phase: str | None
    phase_started: float | None
    phase_deadline: float | None  # unix time; None: no timeout given
    total: int | None = None  # the trainer's max steps, when autobeat could read it

    def on_clock(self, to_clock: Callable[[float], float]) -> Heartbeat:
        """The same slot with its Unix times on the run loop's clock."""
        return dataclasses.replace(
            self,
            at=to_clock(self.at) if self.at else self.at,
            phase_started=to_clock(self.phase_started) if self.phase_started else self.phase_started,
            phase_deadline=to_clock(self.phase_deadline) if self.phase_deadline else self.phase_deadline,
        )


def read_heartbeats(directory: Path) -> list[Heartbeat]:
    """Every valid slot in ``directory``; truncated or foreign files are skipped."""
    out: list[Heartbeat] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return out
    for name in names:
        if not name.endswith(BEAT_SUFFIX):
            continue
        try:
            with open(directory / name, "rb") as f:
                raw = f.read(SLOT_SIZE)
        except OSError:
            continue
        if len(raw) < SLOT_SIZE:
            continue
        magic, rank, pid, total = HEADER.unpack_from(raw, 0)
        if magic != MAGIC:
            continue
        at, step, count = BEAT.unpack_from(raw, BEAT_OFFSET)
        deadline, started, pname = PHASE.unpack_from(raw, PHASE_OFFSET)
        phase_name = pname.rstrip(b"\0").decode(errors="replace") or None
        out.append(
            Heartbeat(
                pid=pid,
                rank=None if rank < 0 else rank,
                at=at,
                step=None if step < 0 else step,
                count=count,
                phase=phase_name,
                phase_started=started if phase_name else None,
                phase_deadline=deadline if phase_name and deadline > 0 else None,
                total=total or None,
            )
        )
    return out
