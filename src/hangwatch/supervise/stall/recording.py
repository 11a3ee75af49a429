"""Evidence before action: an incident is on disk and announced before anything is done to the job. The one writer
of incidents for a hang, a report, a heal and a node that follows another node's decision."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from hangwatch.causes import Cause
from hangwatch.records import layout
from hangwatch.records.layout import command_name
from hangwatch.records.run import EventKind
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.progress.detector import StallDetector

if TYPE_CHECKING:
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.evidence import Evidence
    from hangwatch.records.incident import Action, Incident, LastProgress
    from hangwatch.supervise.books.books import RunAccounts

# The incident records, their rendering and the diagnosis are imported when the first incident comes:
# a job that never stalls does not pay for them when hangwatch starts.

log = logging.getLogger(__name__)


def flight_dumps(evidence: Evidence) -> dict[int, str]:
    """Each rank's whole flight recorder dump, as read at the capture (rank -> JSON text)."""
    return {
        p.info.rank if p.info.rank is not None else p.info.pid: p.flight.raw
        for p in evidence.processes
        if p.flight is not None and p.flight.raw
    }


def last_progress(det: StallDetector) -> LastProgress | None:
    """The detector's newest counted progress, as the incident records it."""
    from hangwatch.records.incident import LastProgress

    return LastProgress(at=det.last.at, step=det.last.step, source=det.last.source) if det.last else None


class Recorder:
    """Writes a run's incidents and announces them (the banner, the notification, the summary and the page)."""

    def __init__(self, ctx: RunContext, books: RunAccounts) -> None:
        self.ctx, self.books = ctx, books

    def capture(
        self,
        evidence: Evidence,
        diagnosis: Diagnosis,
        *,
        attempt: int,
        action: Action,
        detector: StallDetector,
        detected_at: float,
        stalled: float,
        remedy: str | None = None,
    ) -> Path | None:
        """One capture's incident, written (None where it could not be: a full disk must not keep a hung job from
        being ended, restarted or healed, nor stop supervision; what failed is logged)."""
        from hangwatch.diagnose.assemble import build_incident

        incident = build_incident(
            evidence,
            diagnosis,
            attempt=attempt,
            action=action,
            last_progress=last_progress(detector),
            detected_at=detected_at,
            remedy=remedy,
        )
        try:
            return self.record(incident, stalled, flight_dumps(evidence))
        except Exception:  # the act goes on without its record; what failed is logged
            log.exception("could not record the incident")
            return None

    def record(self, incident: Incident, stalled: float, flight: dict[int, str] | None = None) -> Path:
        """The incident on disk, counted and announced, before anything is killed."""
        from hangwatch.report.banner import incident_banner, notification

        ctx = self.ctx
        path = ctx.rundir.write_incident(incident, flight)
        ctx.ledger.incidents += 1
        root = incident.root_cause
        ctx.incident_counts[(root.cause if root else Cause.UNKNOWN, incident.verdict.value)] += 1
        ctx.rundir.event(
            EventKind.INCIDENT,
            attempt=incident.attempt,
            verdict=incident.verdict.value,
            cause=root.cause if root else None,
            path=str(path),
            action=incident.action.value,
        )
        self.books.write_summary(final=False)
        page = self.books.write_page()
        banner = incident_banner(incident, stalled, path / layout.REPORT, page)
        ctx.say("\n".join(banner))
        ctx.notifier.send(*notification(command_name(ctx.cfg.argv), incident, banner))
        return path
