"""Cause-directed restarts: when the user's --fallback ladder is used up, the root cause picks the
remedy for the next attempt. The job's code is not touched: DataLoader overrides travel in
``HANGWATCH_REMEDY_DATALOADER`` and the startup hook applies them as each DataLoader is built; the
rest are environment variables. A remedy that did not help is not tried twice."""

from __future__ import annotations

import json
from dataclasses import field
from typing import TYPE_CHECKING

from hangwatch.causes import CATALOGUE, Cause
from hangwatch.records.values import frozen, mutable

if TYPE_CHECKING:
    from hangwatch.records.incident import Finding


LOADER_ENV = "HANGWATCH_REMEDY_DATALOADER"
WHY_ENV = "HANGWATCH_REMEDY_WHY"


@frozen
class Remedy:
    """One named remedy: DataLoader keyword overrides and/or environment variables."""

    name: str
    text: str  # what a person reads: "DataLoader(multiprocessing_context='spawn')"
    loader: tuple[tuple[str, object], ...] = ()
    env: tuple[tuple[str, str], ...] = ()


REMEDIES: dict[str, Remedy] = {
    r.name: r
    for r in (
        Remedy("spawn", "DataLoader(multiprocessing_context='spawn')", loader=(("multiprocessing_context", "spawn"),)),
        Remedy(
            "forkserver",
            "DataLoader(multiprocessing_context='forkserver')",
            loader=(("multiprocessing_context", "forkserver"),),
        ),
        Remedy(
            "no_persistent_workers", "DataLoader(persistent_workers=False)", loader=(("persistent_workers", False),)
        ),
        Remedy(
            "fewer_workers",
            "DataLoader(prefetch_factor=1) with at most 2 workers",
            loader=(("prefetch_factor", 1), ("max_workers", 2)),
        ),
        Remedy("workers0", "DataLoader(num_workers=0)", loader=(("num_workers", 0),)),
        Remedy(
            "omp1",
            "OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false",
            env=(("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1"), ("TOKENIZERS_PARALLELISM", "false")),
        ),
        Remedy("no_compile", "TORCHDYNAMO_DISABLE=1 (torch.compile off)", env=(("TORCHDYNAMO_DISABLE", "1"),)),
    )
}

# The ladder of each cause, most likely first (the last rung is the slowest, safest setting): the catalogue's.
LADDERS: dict[str, tuple[str, ...]] = {c: i.ladder for c, i in CATALOGUE.items() if i.ladder}
NATIVE_MARKERS = ("OpenMP", "MKL", "tokenizers")  # a native fork hang: threads first, then spawn
EPOCH_START_MARKER = "epoch start"  # the DataLoader rule's evidence for a wait in DataLoader._reset
PREEXEC_MARKER = "preexec_fn"  # the fork rule's words for a lock taken in Popen's preexec_fn: no start method helps


def ladder(finding: Finding, custom: dict[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The remedies for a finding, in order (``custom``: the user's ladders from hangwatch.toml)."""
    if custom and finding.cause in custom:
        return custom[finding.cause]
    rungs = LADDERS.get(finding.cause, ())
    if finding.cause == Cause.DATALOADER_WORKER_STUCK and finding.proves_hang:
        return ()  # a wait nothing can end, or a counting spin, at the user's line: num_workers=0 hangs there too
    text = " ".join((finding.summary, *finding.evidence))
    if finding.cause == Cause.FORK_INHERITED_LOCK and PREEXEC_MARKER in finding.summary:
        return ()  # Popen forks its child itself, whatever multiprocessing's start method or the workers
    if finding.cause == Cause.FORK_INHERITED_LOCK and any(m in text for m in NATIVE_MARKERS):
        rungs = ("omp1", *rungs)
    if finding.cause == Cause.DATALOADER_WORKER_STUCK and EPOCH_START_MARKER in text:
        rungs = ("no_persistent_workers", *rungs)
    return rungs


@frozen
class Applied:
    """A remedy applied from an attempt on, and why."""

    attempt: int  # the attempt that runs with it
    remedy: str
    text: str
    cause: str
    why: str = ""  # why this rung (by the deadline and budget: recover/choice.py), when others were weighed


@mutable
class RemedyPlan:
    """The remedies applied so far (cumulative, like fallbacks); picks the next one for a cause."""

    custom: dict[str, tuple[str, ...]] = field(default_factory=dict)
    applied: list[Applied] = field(default_factory=list)

    def next_for(self, finding: Finding, attempt: int, loader_overrides: bool = True) -> Applied | None:
        """Record and return the remedy the next ``attempt`` runs with (None: nothing left to try).
        ``loader_overrides`` False (--no-autobeat: no hook in the job) skips DataLoader remedies."""
        left = self.candidates(finding, loader_overrides)
        return self.apply(left[0], finding, attempt) if left else None

    def candidates(self, finding: Finding, loader_overrides: bool = True) -> list[str]:
        """The cause's rungs not tried yet, in the ladder's order."""
        tried = {a.remedy for a in self.applied}
        return [
            name
            for name in ladder(finding, self.custom)
            if name in REMEDIES and name not in tried and not (REMEDIES[name].loader and not loader_overrides)
        ]

    def apply(self, name: str, finding: Finding, attempt: int, why: str = "") -> Applied:
        """Record that ``attempt`` runs with remedy ``name``."""
        a = Applied(attempt, name, REMEDIES[name].text, finding.cause, why)
        self.applied.append(a)
        return a

    def env(self) -> dict[str, str]:
        """The environment an attempt gets for every remedy applied so far."""
        out: dict[str, str] = {}
        loader: dict[str, object] = {}
        for a in self.applied:
            r = REMEDIES[a.remedy]
            out.update(dict(r.env))
            loader.update(dict(r.loader))
        if loader:
            out[LOADER_ENV] = json.dumps(loader)
            out[WHY_ENV] = ", ".join(sorted({a.cause for a in self.applied}))
        return out
