"""`hangwatch report RUN_DIR`: a run's summary, its timeline of events, and each incident."""

from __future__ import annotations

import time
from dataclasses import field
from pathlib import Path
from typing import TextIO

from hangwatch.errors import UsageError
from hangwatch.records.incident import Incident
from hangwatch.records.layout import SKIPPED, RunLayout
from hangwatch.records.run import Event, EventKind, RunSummary
from hangwatch.records.values import frozen

TIMELINE_EVENTS = frozenset(
    k.value
    for k in (
        EventKind.LAUNCH,
        EventKind.SUSPECT,
        EventKind.EXTENDED,
        EventKind.INCIDENT,
        EventKind.ACTION,
        EventKind.RECOVERED,
        EventKind.HEAL,
        EventKind.RESTART,
        EventKind.GIVE_UP,
        EventKind.JOB_EXIT,
        EventKind.SIGNAL,
        EventKind.INTERNAL_ERROR,
        EventKind.EXIT,
    )
)


@frozen
class RunRecord:
    """A run directory, read: its summary (None before the first one was written), events, incidents."""

    summary: RunSummary | None
    events: list[Event]
    incidents: list[Incident]
    numbers: list[int] = field(default_factory=list)  # each incident's number (incidents/NNN), in the same order
    damaged: list[str] = field(default_factory=list)  # files there that do not parse, left out

    def numbered(self) -> list[tuple[int, Incident]]:
        """(number, incident), oldest first."""
        return list(zip(self.numbers or range(1, len(self.incidents) + 1), self.incidents, strict=False))


def load_run(run_dir: Path) -> RunRecord:
    """Read a run directory made by `hangwatch run`; UsageError if it is not one or is damaged."""
    layout = RunLayout(run_dir)
    if not layout.is_run():
        raise UsageError(
            f"{run_dir} is not a hangwatch run directory (no events.jsonl)",
            "Pass a directory made by `hangwatch run`, e.g. hangwatch-runs/<time>-<cmd>",
        )
    try:  # the layout's one policy: a torn line or an unparsable file is left out; a file of the wrong shape is damage
        raw = layout.summary_dict()
        summary = RunSummary.from_dict(raw) if raw is not None else None
        events = [Event.from_dict(d) for d in layout.event_dicts()]
        read = layout.incident_dicts()
        incidents = [Incident.from_dict(d) for _, d in read]
    except (ValueError, KeyError, TypeError) as e:
        raise UsageError(
            f"cannot read the run in {run_dir}: {e}", "Check the files were not edited or truncated"
        ) from e
    return RunRecord(summary, events, incidents, [n for n, _ in read], layout.damaged())


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t))


def render_run(run: RunRecord, out: TextIO) -> None:
    """The summary line, the timeline, then every incident."""
    from hangwatch.report.text import render_text  # rich: only for this text rendering

    s = run.summary
    if s is not None:
        out.write(f"run: {' '.join(s.command)}\n")
        fields = [
            f"state {s.state.value}",
            f"attempts {s.attempts}",
            f"exit {s.exit_code}",
            f"last step {s.last_step}",
            f"incidents {s.incidents}",
            f"stalled {s.stalled_seconds} s",
            "goodput " + (f"{s.goodput * 100:.1f}%" if s.goodput is not None else "unknown (no progress signal)"),
            f"progress signal {s.progress_signal}",
        ]
        if s.heals:
            fields.append(f"healed in place {s.heals} (samples skipped {s.skipped_samples}: {SKIPPED})")
        if s.cost_usd is not None:
            fields.append(f"cost ${s.cost_usd:.2f} (wasted ${s.wasted_usd or 0:.2f})")
        out.write("  " + " | ".join(fields) + "\n")
        if s.exit_reason:
            requeue = "" if s.requeue is None else (", worth a requeue" if s.requeue else ", do not requeue")
            out.write(f"  exit {s.exit_code} ({s.exit_reason}{requeue}): {s.exit_why}\n")
    else:
        out.write("run: (no summary yet)\n")
    out.write("\ntimeline:\n")
    for e in run.events:
        if e.kind not in TIMELINE_EVENTS:
            continue
        detail = {k: v for k, v in e.fields.items() if k != "command" and v not in (None, [], "")}
        text = ", ".join(f"{k}={v}" for k, v in detail.items())
        out.write(f"  {_clock(e.at)}  {e.kind:<9} {text[:160]}\n")
    for path in run.damaged:
        out.write(f"\n{path}: damaged (it does not parse), left out\n")
    for n, incident in run.numbered():
        out.write(f"\nincident {n:03d} (attempt {incident.attempt}, action {incident.action.value}):\n")
        render_text(incident, out, color=False)
