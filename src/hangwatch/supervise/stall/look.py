"""One look at a job that shows no progress: capture it, diagnose it, and take what arrived meanwhile.

The startup probe, the first look at a stall and the suspect's capture all see the job through this one
function, so each reads the same facts (the ranks' own progress included) and a fix to what a look measures
reaches all three. What each does with a ``Look`` is its own judgement (stall/startup.py, stall/suspect.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hangwatch.supervise.attempt import Attempt
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.progress.tracking import Tracker
from hangwatch.supervise.stall.capturing import Capturer

if TYPE_CHECKING:
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.evidence import Evidence


@dataclass(frozen=True)
class Look:
    """A capture of the job, its diagnosis, and the movement that arrived while it was captured."""

    evidence: Evidence
    diagnosis: Diagnosis
    moved: str | None  # progress or output that arrived during the capture, in words: the job is not hung


def diagnose(evidence: Evidence) -> Diagnosis:
    """The diagnosis engine, imported when first needed (a job that never stalls does not pay for it)."""
    from hangwatch.diagnose import diagnose as run

    return run(evidence)


def take_look(
    ctx: RunContext, capturer: Capturer, tracker: Tracker, a: Attempt, window: float | None = None
) -> Look | None:
    """Capture the attempt's job (over ``window``, else the capture window), add every rank's own progress,
    diagnose, and take what arrived meanwhile. None when the job ended during the look; raises CaptureError
    when it could not be read."""
    evidence = capturer.bounded(a.job.pid) if window is None else capturer.bounded(a.job.pid, window=window)
    ranks = ctx.intake.rank_progress()
    if ranks:
        evidence = dataclasses.replace(evidence, rank_progress=ranks)
    diagnosis = diagnose(evidence)
    if a.job.poll() is not None:
        return None
    return Look(evidence, diagnosis, tracker.moved_during_capture(a))
