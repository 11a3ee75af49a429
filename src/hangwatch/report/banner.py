"""What hangwatch run says while a job runs: the incident banner on stderr, the notification, and
the one-line status on a terminal. Built from records only."""

from __future__ import annotations

import time
from pathlib import Path

from hangwatch.records.incident import Incident, Verdict
from hangwatch.records.run import RunSummary
from hangwatch.report.units import duration


def incident_banner(incident: Incident, stalled_s: float, report: Path, page: Path | None = None) -> list[str]:
    """The lines printed when an incident is recorded: verdict, root cause, where, fix, action."""
    root = incident.root_cause
    lp = incident.last_progress
    head = f"hangwatch: {incident.verdict.value.upper()}"
    if incident.verdict != Verdict.CRASHED:
        head += f" after {stalled_s:.0f} s without progress"
    if lp is not None and lp.step is not None:
        head += f" (last: step {lp.step}, {lp.source})"
    if root is not None:
        head += f": {root.cause}"
    lines = [head]
    if root is not None:
        lines.append(f"  {root.summary}")
        if root.where is not None and root.where.file:
            lines.append(f"  at {root.where.location()}  {root.where.function} ({root.where.owner()})")
        if root.fix:
            lines.append(f"  fix: {root.fix[0]}")
    if incident.remedy:
        lines.append(f"  next attempt applies: {incident.remedy}")
    lines.append(f"  action: {incident.action.value}; report: {report}")
    if page is not None:
        lines.append(f"  page: {page} (timeline, rates, every incident; opens offline)")
    return lines


def notification(job_name: str, incident: Incident, banner: list[str]) -> tuple[str, str]:
    """(title, body) of the notification for an incident."""
    root = incident.root_cause
    title = f"hangwatch: {job_name} {incident.verdict.value}" + (f" ({root.cause})" if root else "")
    return title, "\n".join(banner[1:])


def deadline_text(summary: RunSummary) -> str | None:
    """``finish Wed 14:20, 2.1 d before the deadline`` (or ``5.2 h after``), when there is a deadline
    and a projection."""
    if summary.finish_at is None or summary.slack_seconds is None:
        return None
    when = time.strftime("%a %H:%M", time.localtime(summary.finish_at))
    slack = summary.slack_seconds
    return f"finish {when}, {duration(abs(slack))} {'before' if slack >= 0 else 'after'} the deadline"


def clock_text(seconds: float) -> str:
    """H:MM:SS."""
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def status_line(summary: RunSummary, since_progress_s: float, note: str | None = None) -> str:
    """The one-line status shown on a terminal while the job runs (``note``: the last startup probe)."""
    parts = [f"hangwatch [{summary.state.value}" + (f": {note}" if note else "") + "]"]
    if summary.progress_signal in ("none", "output"):
        parts.append(f"progress_signal: {summary.progress_signal}")
    if summary.last_step is not None:
        parts.append(f"step {summary.last_step}" + (f"/{summary.total_steps}" if summary.total_steps else ""))
    if summary.steps_per_s is not None:
        parts.append(f"{summary.steps_per_s:.2f} steps/s")
    if summary.eta_seconds is not None:
        parts.append(f"ETA {clock_text(summary.eta_seconds)}")
    when = deadline_text(summary)
    if when is not None:
        parts.append(when)
    if summary.cost_usd is not None:
        parts.append(
            f"${summary.cost_usd:.2f}"
            + (f" (+${summary.projected_cost_usd:.2f} to finish)" if summary.projected_cost_usd is not None else "")
        )
    parts.append(f"last progress {since_progress_s:.0f} s ago")
    return " | ".join(parts)
