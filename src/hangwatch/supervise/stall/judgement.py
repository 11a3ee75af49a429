"""What one look at a stalled attempt measured and concluded: the values that travel together from the
judge (startup probes, the suspect round) to the act (declare, report)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from hangwatch.records.values import frozen

if TYPE_CHECKING:
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.evidence import Evidence
    from hangwatch.records.incident import Finding
    from hangwatch.supervise.attempt import Attempt


@frozen
class Judgement:
    """An attempt, its capture, the diagnosis, when, and how long it had been without progress."""

    attempt: Attempt
    evidence: Evidence
    diagnosis: Diagnosis
    now: float
    stalled: float  # seconds without progress (or waiting for peers) when it was judged

    @property
    def root(self) -> Finding:
        """The diagnosis's root cause."""
        return self.diagnosis.root

    def revised(self, diagnosis: Diagnosis | None = None, stalled: float | None = None) -> Judgement:
        """The same judgement with another diagnosis (a bound passed, a verdict restated) or stall."""
        return dataclasses.replace(
            self,
            diagnosis=diagnosis if diagnosis is not None else self.diagnosis,
            stalled=stalled if stalled is not None else self.stalled,
        )


def someone_could_end(diagnosis: Diagnosis) -> bool:
    """Whether what the look proved is a wait a person could still end: a prompt (its cause, or a chain of the
    graph that ends at the terminal). A look the kernel's view of a still job called for, seconds into the
    stillness, does not act on it (someone at the terminal may be reading the prompt); the stall's own look, 15 s
    in, decides as before."""
    from hangwatch.causes import Cause

    if diagnosis.root.cause == Cause.PROCESS_WAITS_FOR_INPUT:
        return True
    return diagnosis.graph is not None and any(c.ending == "person" for c in diagnosis.graph.chains)
