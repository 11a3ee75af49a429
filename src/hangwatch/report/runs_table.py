"""`hangwatch ls`: one line per run."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table

from hangwatch.report.units import duration, money
from hangwatch.runs.view import RunView, ViewState

STATE_STYLE = {
    ViewState.RUNNING: "green",
    ViewState.HUNG: "bold red",
    ViewState.RESTARTING: "yellow",
    ViewState.FINISHED: "cyan",
    ViewState.CRASHED: "red",
    ViewState.STOPPED: "magenta",
    ViewState.DEAD: "bold red",
}


def row(v: RunView) -> list[str]:
    """The cells of one run."""
    s = v.summary
    state: str = (
        "dead (hangwatch gone)"
        if v.state == ViewState.DEAD  # why: in --json's detail
        else "hung (ended)"
        if v.state == ViewState.HUNG and v.detail == "ended"
        else v.state.value
    )
    if v.state == ViewState.RUNNING and s is not None and s.note:  # alive without progress: slow, or waiting for peers
        state = f"running ({s.note.split(':', 1)[0].split(' ', 1)[0]})"
    if s is None:
        return [v.name, state] + ["-"] * 8
    step = "-" if s.last_step is None else (f"{s.last_step}/{s.total_steps}" if s.total_steps else str(s.last_step))
    rate = "-" if s.steps_per_s is None else f"{s.steps_per_s:.3g}/s"
    eta = duration(s.eta_seconds) if v.live else "-"
    if v.live and s.slack_seconds is not None:  # --deadline: how far before (or after) it the projection lands
        eta += f" ({duration(abs(s.slack_seconds))} {'spare' if s.slack_seconds >= 0 else 'late'})"
    stalled = duration(s.stalled_seconds) if s.stalled_seconds else "0"
    cost = money(s.cost_usd)
    if s.projected_cost_usd is not None and v.live:
        cost += f" (+{money(s.projected_cost_usd)})"
    return [
        v.name,
        state,
        str(s.attempts),
        step,
        rate,
        eta,
        duration(v.since_progress),
        str(s.incidents),
        stalled,
        cost,
    ]


HEADERS = ["RUN", "STATE", "ATT", "STEP", "RATE", "ETA", "LAST PROGRESS", "INCIDENTS", "STALLED", "COST"]


def runs_table(views: list[RunView]) -> Table:
    """The table of runs, states coloured and also spelled out (readable without colour)."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for h in HEADERS:
        table.add_column(h, no_wrap=h in ("RUN", "STEP"), overflow="fold")
    for v in views:
        cells = row(v)
        cells[1] = f"[{STATE_STYLE.get(v.state, '')}]{cells[1]}[/]" if STATE_STYLE.get(v.state) else cells[1]
        table.add_row(*cells)
    return table


def render_runs(views: list[RunView], out: TextIO, color: bool) -> None:
    """Print the table (plain text when ``color`` is False)."""
    console = Console(
        file=out,
        no_color=not color,
        highlight=False,
        soft_wrap=False,
        width=None if color else 200,
        force_terminal=color or None,
    )
    if not views:
        console.print("no runs found (looked in ./hangwatch-runs, the given directories and the run index)")
        return
    console.print(runs_table(views))
