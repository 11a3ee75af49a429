"""A run directory read as a whole: its state (is its supervisor alive?), progress, money, incidents."""

from __future__ import annotations

import os
import time
from enum import Enum
from pathlib import Path
from typing import Any

import psutil

from hangwatch.records.layout import RunLayout
from hangwatch.records.run import Event, EventKind, RunState, RunSummary
from hangwatch.records.values import frozen

# A supervisor on another host rewrites summary.json every 2 s, except while it captures (up to a minute
# with a stuck py-spy), waits out a kill grace or a GPU release: silent longer than all that, it is gone.
STALE_S = 180.0
START_SLACK_S = 5.0  # a live pid that started later than the run did is someone else (a reused pid)


class ViewState(str, Enum):
    """Where a run stands as `ls` and `watch` show it (a summary's RunState, read with its supervisor's life)."""

    RUNNING = "running"
    HUNG = "hung"
    RESTARTING = "restarting"
    FINISHED = "finished"
    CRASHED = "crashed"
    STOPPED = "stopped"
    DEAD = "dead"  # its hangwatch is gone without an ending

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


LIVE_STATES = frozenset({ViewState.RUNNING, ViewState.HUNG, ViewState.RESTARTING})


@frozen
class IncidentBrief:
    """The newest incident, in one line: cause, where, summary."""

    number: int
    verdict: str
    cause: str | None
    where: str | None
    summary: str | None


@frozen
class RunView:
    """One run as `hangwatch ls` and `hangwatch watch` show it."""

    path: Path
    state: ViewState
    detail: str  # the detector's state while it runs; why it is dead; "" otherwise
    summary: RunSummary | None
    events: list[Event]
    latest_incident: IncidentBrief | None
    now: float

    @property
    def name(self) -> str:
        """The run directory's name."""
        return self.path.name

    @property
    def live(self) -> bool:
        """Its hangwatch is alive and the run goes on."""
        return self.summary is not None and self.summary.ended_at is None and self.state in LIVE_STATES

    @property
    def since_progress(self) -> float | None:
        """Seconds since the last progress, while the run goes on."""
        s = self.summary
        if s is None or s.last_progress_at is None:
            return None
        end = s.ended_at if s.ended_at is not None else self.now
        return max(0.0, end - s.last_progress_at)

    def to_dict(self) -> dict[str, Any]:
        """The `hangwatch ls --json` object of this run."""
        s = self.summary
        d: dict[str, Any] = {"run_dir": str(self.path), "name": self.name, "state": self.state, "detail": self.detail}
        if s is not None:
            d.update(
                command=list(s.command),
                attempts=s.attempts,
                step=s.last_step,
                total_steps=s.total_steps,
                steps_per_s=s.steps_per_s,
                eta_seconds=s.eta_seconds,
                since_progress_s=_round(self.since_progress),
                incidents=s.incidents,
                stalled_seconds=s.stalled_seconds,
                started_at=s.started_at,
                ended_at=s.ended_at,
                exit_code=s.exit_code,
                cost_usd=s.cost_usd,
                projected_cost_usd=s.projected_cost_usd,
                host=s.host,
                supervisor_pid=s.supervisor_pid,
            )
        if self.latest_incident is not None:
            i = self.latest_incident
            d["latest_incident"] = {
                "number": i.number,
                "verdict": i.verdict,
                "cause": i.cause,
                "where": i.where,
                "summary": i.summary,
            }
        return d


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def read_events(run_dir: Path) -> list[Event]:
    """events.jsonl, skipping a torn last line (the run may be writing it now)."""
    out: list[Event] = []
    for d in RunLayout(run_dir).event_dicts():
        try:
            out.append(Event.from_dict(d))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def read_summary(run_dir: Path) -> RunSummary | None:
    """summary.json, or None where it is missing or unreadable."""
    d = RunLayout(run_dir).summary_dict()
    try:
        return None if d is None else RunSummary.from_dict(d)
    except (ValueError, KeyError, TypeError):
        return None


def latest_incident(run_dir: Path) -> IncidentBrief | None:
    """The newest incidents/NNN/incident.json, briefly."""
    for number, d in reversed(RunLayout(run_dir).incident_dicts()):
        findings = d.get("findings") or []
        root = findings[0] if findings and isinstance(findings[0], dict) else {}
        where = root.get("where") or {}
        loc = f"{where.get('file')}:{where.get('line')}" if isinstance(where, dict) and where.get("file") else None
        return IncidentBrief(number, str(d.get("verdict", "")), root.get("cause"), loc, root.get("summary"))
    return None


def supervisor_alive(s: RunSummary, now: float) -> tuple[bool, str]:
    """Whether the run's hangwatch is alive: by pid and start time on this host, by the age of
    summary.json on another. (alive, why not)."""
    if s.supervisor_pid is None:
        return False, "no supervisor recorded"
    if s.host and s.host != os.uname().nodename:
        age = now - (s.updated_at or 0.0)
        return (True, "") if age <= STALE_S else (False, f"no news from {s.host} for {age:.0f} s")
    try:
        p = psutil.Process(s.supervisor_pid)
        if p.create_time() <= s.started_at + START_SLACK_S and p.status() != psutil.STATUS_ZOMBIE:
            return True, ""
    except psutil.Error:
        pass
    return False, f"hangwatch (pid {s.supervisor_pid}) died without writing an end"


def _restarting(events: list[Event]) -> bool:
    """The job was ended and the next attempt has not launched yet."""
    for e in reversed(events):
        if e.kind in (EventKind.LAUNCH, EventKind.GIVE_UP, EventKind.EXIT):
            return False
        if e.kind == EventKind.TERMINATE:
            return True
    return False


ENDED = {
    RunState.FINISHED: ViewState.FINISHED,
    RunState.CRASHED: ViewState.CRASHED,
    RunState.STOPPED: ViewState.STOPPED,
}


def load_view(run_dir: Path, now: float | None = None) -> RunView:
    """Read a run directory into a RunView (never raises for a damaged or half-written run)."""
    now = time.time() if now is None else now
    s = read_summary(run_dir)
    events = read_events(run_dir)
    incident = latest_incident(run_dir)
    if s is None:
        state, detail = ViewState.DEAD, "no summary.json"
    elif s.ended_at is not None:
        if s.state in ENDED:
            state, detail = ENDED[s.state], ""
        else:  # ended hung and not restarted (killed, or restarts used up): hung, and over
            hung = s.state == RunState.HUNG
            state, detail = (ViewState.HUNG, "ended") if hung else (ViewState.STOPPED, s.state.value)
    else:
        alive, why = supervisor_alive(s, now)
        if not alive:
            state, detail = ViewState.DEAD, why
        elif s.state == RunState.HUNG:
            state, detail = ViewState.HUNG, ""
        elif _restarting(events):
            state, detail = ViewState.RESTARTING, ""
        else:
            state, detail = ViewState.RUNNING, s.note or s.state.value
    return RunView(run_dir, state, detail, s, events, incident, now)


def find_runs(dirs: list[Path], use_index: bool, env: dict[str, str] | None = None) -> list[Path]:
    """Run directories under ``dirs`` (a run directory itself, or a directory of them), plus the
    per-user index; each once."""
    from hangwatch.runs.index import indexed

    candidates: list[Path] = []
    for d in dirs:
        if RunLayout(d).is_run():
            candidates.append(d)
        elif d.is_dir():
            candidates.extend(p for p in d.iterdir() if RunLayout(p).is_run())
    if use_index:
        candidates.extend(indexed(env))
    found: dict[Path, None] = {}
    for p in candidates:
        try:
            found.setdefault(p.resolve(), None)
        except OSError:
            continue
    return list(found)


def started(view: RunView) -> float:
    """When the run started (for ordering): summary.json's start, else its first event."""
    if view.summary is not None:
        return view.summary.started_at
    return view.events[0].at if view.events else 0.0
