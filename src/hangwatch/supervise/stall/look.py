"""One look at a job that shows no progress: capture it, diagnose it, and take what arrived meanwhile.

The startup probe, the first look at a stall and the suspect's capture all see the job through one ``Looker``
(the run loop's: supervisor.py), so each reads the same facts (the ranks' own progress included) and a fix to
what a look measures reaches all three. What each does with a ``Look`` is its own judgement (stall/startup.py,
stall/suspect.py), returned to the loop as an outcome.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from hangwatch.errors import CaptureError
from hangwatch.records.values import frozen
from hangwatch.supervise.progress.detector import State, Strength

if TYPE_CHECKING:
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.evidence import Evidence
    from hangwatch.supervise.attempt import Attempt
    from hangwatch.supervise.context import RunContext
    from hangwatch.supervise.progress.intake import Intake
    from hangwatch.supervise.stall.capturing import Capturer


@frozen
class Look:
    """A capture of the job, its diagnosis, and the movement that arrived while it was captured."""

    evidence: Evidence
    diagnosis: Diagnosis
    moved: str | None  # progress or output that arrived during the capture, in words: the job is not hung


@frozen
class Unseen:
    """A look with nothing to judge: the job ended during it (``error`` None: the next round sees its exit), or
    it could not be read (the capture's error, written down by the capturer: ``Capturer.look``)."""

    error: CaptureError | None = None


# The attempt and the capture window (None: the capture's own) -> the look, or why there is none. Never raises.
Looker = Callable[["Attempt", "float | None"], "Look | Unseen"]


def diagnose(evidence: Evidence) -> Diagnosis:
    """The diagnosis engine, imported when first needed (a job that never stalls does not pay for it)."""
    from hangwatch.diagnose import diagnose as run

    return run(evidence)


def capture_and_diagnose(
    ctx: RunContext, capturer: Capturer, a: Attempt, window: float | None = None
) -> tuple[Evidence, Diagnosis] | Unseen:
    """Capture the attempt's job (over ``window``, else the capture window), add every rank's own progress, and
    diagnose; ``Unseen`` when the job ended during the look or could not be read."""
    evidence = capturer.look(a.job.pid, window)
    if isinstance(evidence, CaptureError):
        return Unseen(evidence)
    ranks = ctx.intake.rank_progress()
    if ranks:
        evidence = dataclasses.replace(evidence, rank_progress=ranks)
    diagnosis = diagnose(evidence)
    if a.job.poll() is not None:
        return Unseen()
    return evidence, diagnosis


def what_moved(intake: Intake, was: State, now: State) -> str | None:
    """What arrived while the job was captured (``was``/``now``: the detector's state before and after it was
    taken): a beat or a counter, output that reset an output-only job's clock, or output with new content."""
    strong = sorted({p.source for p in intake.signals if p.strength > Strength.OUTPUT})
    if strong:
        return f"progress during the capture ({', '.join(strong)})"
    if was == State.SUSPECT and now != State.SUSPECT:
        return "progress during the capture (output)"
    if intake.fresh_output:
        return "new output during the capture"
    return None
