"""What one look at a stalled attempt measured and concluded: the values that travel together from the
judge (startup probes, the suspect round) to the act (declare, report)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.evidence import Evidence
    from hangwatch.records.incident import Finding
    from hangwatch.supervise.attempt import Attempt


@dataclass(frozen=True)
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
