"""`hangwatch ls [DIR...]`: the runs under the given directories; with none, ./hangwatch-runs and the
per-user index (``--all`` adds the index to given directories, ``--here`` leaves it out)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command(name="ls")
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON array of runs, for scripts.")
@click.option(
    "--all/--here",
    "use_index",
    default=None,
    help="Also list the runs in the per-user index ($XDG_STATE_HOME/hangwatch/runs) [--all without DIR, "
    "--here with one].",
)
def ls(dirs: tuple[Path, ...], as_json: bool, use_index: bool | None) -> None:
    """List runs: state (running only while its hangwatch is alive), step, rate, ETA, incidents, cost."""
    from hangwatch.errors import UsageError
    from hangwatch.report.runs_table import render_runs
    from hangwatch.runs.view import find_runs, load_view, started

    for d in dirs:
        if not d.exists():
            raise UsageError(f"{d} does not exist", "Pass a run directory or a directory of runs (e.g. hangwatch-runs)")
    if use_index is None:  # a directory given: that directory only; none: here, and every run this user started
        use_index = not dirs
    views = sorted((load_view(p) for p in find_runs(list(dirs) or [Path("hangwatch-runs")], use_index)), key=started)
    if as_json:
        json.dump([v.to_dict() for v in views], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    render_runs(views, sys.stdout, color=sys.stdout.isatty())
