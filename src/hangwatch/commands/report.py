"""`hangwatch report RUN_DIR [--html FILE]`: a run's summary, timeline and incidents."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write one self-contained HTML page (timeline, rates, incidents, process trees) to FILE.",
)
def report(run_dir: Path, html_file: Path | None) -> None:
    """Render a run's summary, timeline and incidents (a directory made by `hangwatch run`)."""
    from hangwatch.report.run_report import load_run, render_run

    run = load_run(run_dir)
    if html_file is None:
        render_run(run, sys.stdout)
        return
    from hangwatch.atomic import write_text_atomic
    from hangwatch.report.html import render_html

    write_text_atomic(html_file, render_html(run, run_dir))
    click.echo(f"hangwatch: wrote {html_file} ({html_file.stat().st_size / 1024:.0f} KiB); open it in a browser.")
