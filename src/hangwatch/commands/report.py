"""`hangwatch report RUN_DIR`: a run's summary, timeline and incidents."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def report(run_dir: Path) -> None:
    """Render a run's summary, timeline and incidents (a directory made by `hangwatch run`)."""
    from hangwatch.report.run_report import load_run, render_run

    render_run(load_run(run_dir), sys.stdout)
