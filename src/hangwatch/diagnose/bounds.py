"""Alive, but past its bound: a diagnosis whose verdict was slow or waiting, turned into a hang once
the job's own history (or --rendezvous-timeout) says it has waited too long. The summary then says
both what the job does and why that is now a hang, so the words agree with the verdict."""

from __future__ import annotations

import dataclasses

from hangwatch.causes import CATALOGUE
from hangwatch.diagnose.engine import Diagnosis
from hangwatch.diagnose.verdict import HUNG_CAUSE
from hangwatch.fixes import WORKER_STUCK_FIX
from hangwatch.records.evidence import Evidence, Role
from hangwatch.records.incident import Finding, Verdict

# A worker that is alive but has not returned its batch within the bound is stuck in dataset code (HUNG_CAUSE).
# Alive in ways a step history says nothing about: a first compile, a long GPU kernel, output that only
# looks frozen, I/O that moves. They get --max-slow, as before.
NOT_BY_HISTORY = frozenset(c for c, i in CATALOGUE.items() if not i.by_history)
HISTORY_FIX = (
    "If this work really takes this long, give it room: a larger --history-factor, --history-floor or "
    "--phase-factor (hangwatch.toml: history_factor, history_floor, phase_factor)."
)


def bounded_by_history(finding: Finding) -> bool:
    """Whether an alive finding is judged against the job's step and phase history."""
    return finding.cause not in NOT_BY_HISTORY


def unseen_progress(diagnosis: Diagnosis) -> Diagnosis:
    """A job the look saw moving that has shown no progress for long enough to be reported: slow, as a run sees it
    (no step came), not progressing."""
    moving = diagnosis.verdict == Verdict.PROGRESSING
    return dataclasses.replace(diagnosis, verdict=Verdict.SLOW) if moving else diagnosis


def past_history(diagnosis: Diagnosis, stalled_s: float, basis: str, by_history: bool = True) -> Diagnosis:
    """The job is alive but has made no progress for ``stalled_s``: past its history bound ``basis``
    (``by_history``), or past --max-slow when its history could not say."""
    root = diagnosis.root
    cause = HUNG_CAUSE.get(root.cause, root.cause)
    what = root.summary.rstrip(".")
    past = (
        f"far longer than this job's {'batches' if cause != root.cause else 'steps'} take ({basis})"
        if by_history
        else f"past the extra time an alive job gets ({basis})"
    )
    batch = cause != root.cause
    has_not = "has not returned that batch" if batch else "has made no progress"
    # (a worker that works, and works too long: no claim that it is stuck)
    then = "it is stuck in dataset code" if batch and not root.proves_work else "declared hung"
    head = f"{what}, but it {has_not} for {stalled_s:.0f} s, {past}: {then}."
    new = dataclasses.replace(
        root,
        cause=cause,
        summary=head,
        confidence=max(root.confidence, 0.8),
        evidence=(*root.evidence, f"no progress for {stalled_s:.0f} s; this job's own bound: {basis}"),
        fix=(*(WORKER_STUCK_FIX if cause != root.cause else root.fix), HISTORY_FIX),
    )
    return Diagnosis(Verdict.HUNG, (new, *diagnosis.findings[1:]))


def past_rendezvous_timeout(diagnosis: Diagnosis, waited_s: float, timeout_s: float) -> Diagnosis:
    """Ranks or nodes have waited for their peers longer than --rendezvous-timeout."""
    root = diagnosis.root
    new = dataclasses.replace(
        root,
        summary=f"{root.summary.rstrip('.')}; it has waited {waited_s:.0f} s, past --rendezvous-timeout "
        f"({timeout_s:.0f} s): the missing peers are not coming.",
        evidence=(*root.evidence, f"waited {waited_s:.0f} s at setup; --rendezvous-timeout is {timeout_s:.0f} s"),
    )
    return Diagnosis(Verdict.HUNG, (new, *diagnosis.findings[1:]))


def workers_behind(evidence: Evidence, finding: Finding) -> int:
    """When the finding is a DataLoader worker's, how many workers its main process has (each makes
    every n-th batch, so one batch takes n times the interval main sees between batches); else 0."""
    pid = finding.where.pid if finding.where is not None else None
    by_pid = {p.info.pid: p.info for p in evidence.processes}
    info = by_pid.get(pid) if pid is not None else None
    if info is None or info.role != Role.DATALOADER_WORKER:
        return 0
    return sum(1 for i in by_pid.values() if i.role == Role.DATALOADER_WORKER and i.ppid == info.ppid)
