"""`hangwatch watch [RUN_DIR]`: a live, read-only view of a run (or of all running ones)."""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
import tty
from collections.abc import Iterator
from pathlib import Path

import click


@contextlib.contextmanager
def _keys() -> Iterator[int | None]:
    """stdin in cbreak mode (keys arrive without Enter), restored on exit; None when not a terminal."""
    fd = sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else None
    if fd is None:
        yield None
        return
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield fd
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _quit_pressed(fd: int | None, timeout: float) -> bool:
    """Wait up to ``timeout`` for a key; True for q or Q."""
    if fd is None:
        select.select([], [], [], timeout)
        return False
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return False
    key = os.read(fd, 32)
    return b"q" in key.lower() or not key


@click.command()
@click.argument("run_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--interval", default=1.0, show_default=True, type=click.FloatRange(0.1, 60), help="Seconds between refreshes."
)
@click.option("--once", is_flag=True, help="Draw once and exit (for scripts and logs).")
def watch(run_dir: Path | None, interval: float, once: bool) -> None:
    """Watch a run live: step, rate, ETA, step-rate sparkline, newest incident, events. Read-only."""
    from rich.console import Console, RenderableType
    from rich.live import Live

    from hangwatch.errors import UsageError
    from hangwatch.records.layout import RunLayout
    from hangwatch.report.live import RateHistory, render_many, render_one
    from hangwatch.runs.view import LIVE_STATES, find_runs, load_view, started

    if run_dir is not None and not RunLayout(run_dir).is_run():
        raise UsageError(
            f"{run_dir} is not a hangwatch run directory (no events.jsonl)",
            "Pass a directory made by `hangwatch run`, or none to watch every running run",
        )
    history = RateHistory()

    def frame() -> RenderableType:
        if run_dir is not None:
            view = load_view(run_dir)
            history.feed(view)
            return render_one(view, history)
        views = [load_view(p) for p in find_runs([Path("hangwatch-runs")], use_index=True)]
        return render_many(sorted((v for v in views if v.state in LIVE_STATES), key=started))

    console = Console()
    if once:
        console.print(frame())
        return
    try:
        with _keys() as fd, Live(frame(), console=console, auto_refresh=False, transient=False) as live:
            while not _quit_pressed(fd, interval):
                live.update(frame(), refresh=True)
    except KeyboardInterrupt:
        pass
