"""`hangwatch inspect PID`: capture a running job, diagnose it, print the incident."""

from __future__ import annotations

import sys

import click

MAX_WINDOW_S = 600.0


@click.command()
@click.argument("pid", type=click.IntRange(min=1))
@click.option(
    "--window",
    type=click.FloatRange(min=0.2, max=MAX_WINDOW_S),
    default=5.0,
    show_default=True,
    help="Seconds to sample the job for.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one incident object (hangwatch.incident/1).")
@click.option(
    "--evidence",
    "evidence_path",
    type=click.Path(dir_okay=False, writable=True),
    help="Also write the raw samples (hangwatch.evidence/1 JSON) to this file, for a bug report.",
)
@click.option(
    "--native",
    is_flag=True,
    help="Also read native (C/C++) frames of every Python process (slower; automatic where the Python "
    "stack explains nothing).",
)
def inspect(pid: int, window: float, as_json: bool, evidence_path: str | None, native: bool) -> None:
    """Sample the job that PID belongs to and say whether it is hung, where, and why."""
    from hangwatch.api import inspect_pid
    from hangwatch.report.text import render_text

    incident = inspect_pid(pid, window, evidence_path=evidence_path, native=native)
    if as_json:
        click.echo(incident.to_json())
        for note in incident.notes:  # the text report prints its notes itself
            click.echo(f"hangwatch: {note}", err=True)
    else:
        render_text(incident, sys.stdout, color=None)
