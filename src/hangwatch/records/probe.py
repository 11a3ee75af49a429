"""`hangwatch probe-data`'s result: the item scan, the baseline and each DataLoader cell (docs/probe-doctor.md,
``hangwatch.probe/1``)."""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import Any

from hangwatch.records.incident import Finding
from hangwatch.records.values import mutable

SCHEMA = "hangwatch.probe/1"


class CellStatus(str, Enum):
    """Where a cell stands."""

    PENDING = "pending"
    RUNNING = "running"
    OK = "ok"
    HUNG = "hung"
    CRASHED = "crashed"


@mutable
class Cell:
    """One DataLoader configuration and what happened when it ran."""

    multiprocessing_context: str | None
    num_workers: int
    persistent_workers: bool
    status: CellStatus = CellStatus.PENDING
    samples_per_s: float | None = None
    first_batch_s: float | None = None
    peak_rss_mb: float | None = None
    seconds: float | None = None
    finding: Finding | None = None

    def loader_kwargs(self, batch_size: int) -> dict[str, Any]:
        """The DataLoader keyword arguments of this cell."""
        kw: dict[str, Any] = {"batch_size": batch_size, "num_workers": self.num_workers}
        if self.num_workers > 0:
            kw["multiprocessing_context"] = self.multiprocessing_context
            kw["persistent_workers"] = self.persistent_workers
        return kw

    def label(self) -> str:
        """A short human name: ``spawn, 2 workers, persistent=True``."""
        if self.num_workers == 0:
            return "num_workers=0"
        return f"{self.multiprocessing_context}, {self.num_workers} workers, persistent={self.persistent_workers}"

    def to_dict(self) -> dict[str, Any]:
        """The cell as its JSON object."""
        return {
            "multiprocessing_context": self.multiprocessing_context,
            "num_workers": self.num_workers,
            "persistent_workers": self.persistent_workers,
            "status": self.status.value,
            "samples_per_s": self.samples_per_s,
            "first_batch_s": self.first_batch_s,
            "peak_rss_mb": self.peak_rss_mb,
            "finding": self.finding.to_dict() if self.finding else None,
        }


@mutable
class ItemReport:
    """Items read one by one: which failed (with the error), hung (with where) or were slow."""

    checked: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    hung: list[dict[str, Any]] = field(default_factory=list)
    slow: list[dict[str, Any]] = field(default_factory=list)
    good: list[int] = field(default_factory=list)  # map-style indices the matrix may use
    median_s: float | None = None


@mutable
class ProbeResult:
    """The whole probe: items, the num_workers=0 baseline, and the matrix of cells."""

    target: str
    items: ItemReport
    baseline: Cell
    batch_size: int = 8
    cells: list[Cell] = field(default_factory=list)

    def recommendation(self) -> tuple[Cell, float | None] | None:
        """The fastest stable cell and its speedup over the baseline (None: nothing was stable)."""
        ok = [c for c in [self.baseline, *self.cells] if c.status == CellStatus.OK and c.samples_per_s]
        if not ok:
            return None
        best = max(ok, key=lambda c: c.samples_per_s or 0.0)
        base = self.baseline.samples_per_s
        return best, (best.samples_per_s / base) if base and best.samples_per_s else None

    def to_json(self) -> dict[str, Any]:
        """``hangwatch.probe/1``."""
        rec = self.recommendation()
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "target": self.target,
            "items": {
                "checked": self.items.checked,
                "failed": self.items.failed,
                "hung": self.items.hung,
                "slow": self.items.slow,
            },
            "baseline": {
                "samples_per_s": self.baseline.samples_per_s,
                "status": self.baseline.status.value,
                "finding": self.baseline.finding.to_dict() if self.baseline.finding else None,
            },
            "cells": [c.to_dict() for c in self.cells],
            "recommendation": None,
        }
        if rec is not None:
            best, speedup = rec
            kw = best.loader_kwargs(self.batch_size)
            kw.pop("batch_size")
            out["recommendation"] = {
                "dataloader_kwargs": kw,
                "samples_per_s": best.samples_per_s,
                "speedup_vs_baseline": round(speedup, 3) if speedup else None,
            }
        return out
