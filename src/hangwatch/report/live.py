"""What `hangwatch watch` draws: one run (step, rate, ETA, a sparkline of the step rate, the newest
incident, the events as they come), or the table of running runs. Built from RunView only."""

from __future__ import annotations

import time
from dataclasses import field

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from hangwatch.records.run import Event, EventKind, RunSummary
from hangwatch.records.values import mutable
from hangwatch.report.banner import clock_text, deadline_text
from hangwatch.report.runs_table import STATE_STYLE, runs_table
from hangwatch.report.units import duration, money
from hangwatch.runs.view import RunView

BARS = "▁▂▃▄▅▆▇█"
SPARK_POINTS = 60
EVENT_LINES = 8
QUIET_EVENTS = frozenset({EventKind.PROGRESS, EventKind.START})


def sparkline(values: list[float]) -> str:
    """Block characters scaled from 0 to the largest value (so a stall shows as a floor, not as noise)."""
    if not values:
        return ""
    top = max(values) or 1.0
    return "".join(BARS[min(len(BARS) - 1, int(v / top * (len(BARS) - 1) + 0.5))] for v in values)


@mutable
class RateHistory:
    """Step-rate points for the sparkline: from the run's progress events, then from each refresh."""

    points: list[tuple[float, int, int]] = field(default_factory=list)  # (at, attempt, step)

    def feed(self, view: RunView) -> None:
        """Add what is new in ``view`` (progress events, the summary's current step)."""
        last_at = self.points[-1][0] if self.points else float("-inf")
        for e in view.events:
            step, attempt = e.fields.get("step"), e.fields.get("attempt")
            if e.kind == EventKind.PROGRESS and e.at > last_at and isinstance(step, int) and isinstance(attempt, int):
                self.points.append((e.at, attempt, step))
                last_at = e.at
        s = view.summary
        if s is not None and s.last_step is not None and s.updated_at is not None and s.updated_at > last_at:
            self.points.append((s.updated_at, s.attempts, s.last_step))
        del self.points[: -SPARK_POINTS * 4]

    def rates(self) -> list[float]:
        """Steps per second between successive points of the same attempt."""
        out = []
        for (t0, a0, s0), (t1, a1, s1) in zip(self.points, self.points[1:], strict=False):
            if a0 == a1 and t1 > t0:
                out.append(max(0.0, (s1 - s0) / (t1 - t0)))
        return out[-SPARK_POINTS:]


def _event_line(e: Event) -> str:
    detail = {k: v for k, v in e.fields.items() if k not in ("command", "summary") and v not in (None, [], "")}
    text = ", ".join(f"{k}={v}" for k, v in detail.items())
    return f"{time.strftime('%H:%M:%S', time.localtime(e.at))}  {e.kind:<12} {text[:110]}"


def render_one(view: RunView, history: RateHistory) -> RenderableType:
    """The live view of one run."""
    s = view.summary
    style = STATE_STYLE.get(view.state, "")
    head = Text.assemble(
        ("hangwatch watch ", "bold"),
        (view.name, "bold"),
        "  ",
        (view.state.upper(), style),
        (f" ({view.detail})" if view.detail else "", "dim"),
    )
    lines: list[RenderableType] = [head]
    if s is None:
        lines.append(Text("no summary.json yet"))
        return Group(*lines)
    lines.append(Text(" ".join(s.command)[:200], style="dim"))
    grid = _figures(view, s, history)
    lines.append(grid)
    inc = view.latest_incident
    if inc is not None:
        where = f" at {inc.where}" if inc.where else ""
        lines.append(Text.assemble((f"incident {inc.number:03d} ", "bold red"), f"{inc.verdict}: {inc.cause}{where}"))
        if inc.summary:
            lines.append(Text(f"  {inc.summary}"[:300]))
    events = [e for e in view.events if e.kind not in QUIET_EVENTS][-EVENT_LINES:]
    lines.append(Text("events", style="bold"))
    lines.extend(Text(_event_line(e)) for e in events)
    lines.append(Text("q or Ctrl-C to quit (the run goes on)", style="dim"))
    return Group(*lines)


def _figures(view: RunView, s: RunSummary, history: RateHistory) -> Table:
    """One run's figures: step, rate, ETA, deadline, last progress, attempts, incidents, cost, the step rate's line."""
    grid = Table.grid(padding=(0, 3))
    grid.add_column(style="bold")
    grid.add_column()
    step = "-" if s.last_step is None else str(s.last_step)
    if s.total_steps and s.last_step is not None:
        step += f" / {s.total_steps} ({100 * s.last_step / s.total_steps:.1f}%)"
    grid.add_row("step", step)
    grid.add_row("rate", "-" if s.steps_per_s is None else f"{s.steps_per_s:.3g} steps/s")
    grid.add_row("ETA", "-" if s.eta_seconds is None or not view.live else clock_text(s.eta_seconds))
    if s.deadline is not None:
        grid.add_row(
            "deadline",
            time.strftime("%a %d %b %H:%M", time.localtime(s.deadline))
            + (f": {deadline_text(s)}" if deadline_text(s) else ""),
        )
    grid.add_row("last progress", "-" if view.since_progress is None else f"{duration(view.since_progress)} ago")
    grid.add_row("attempts", str(s.attempts))
    grid.add_row("incidents", f"{s.incidents} (stalled {duration(s.stalled_seconds)})")
    if s.cost_usd is not None:
        cost = money(s.cost_usd) + (
            f", {money(s.projected_cost_usd)} to finish" if s.projected_cost_usd and view.live else ""
        )
        if s.budget_usd is not None:
            cost += f", budget {money(s.budget_usd)}"
        grid.add_row("cost", cost)
    rates = history.rates()
    grid.add_row("step rate", (sparkline(rates) + f"  max {max(rates):.3g}/s") if rates else "-")
    return grid


def render_many(views: list[RunView]) -> RenderableType:
    """The live table of running runs."""
    if not views:
        return Group(Text("no running runs (hangwatch ls shows all)"), Text("q or Ctrl-C to quit", style="dim"))
    return Group(runs_table(views), Text("q or Ctrl-C to quit", style="dim"))
