"""hangwatch as a library, for a scheduler, a notebook or a bot: inspect a running job, and read run
directories, without the CLI. ``hangwatch.inspect_pid`` and the readers below are re-exported from the
package (lazily: ``import hangwatch`` stays standard-library only).

    >>> import hangwatch
    >>> incident = hangwatch.inspect_pid(12345, window=5)
    >>> incident.verdict, incident.root_cause
    >>> [v.state for v in hangwatch.list_runs(["hangwatch-runs"])]
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path

from hangwatch.records.incident import Incident
from hangwatch.records.layout import incident_file
from hangwatch.runs.view import RunView, find_runs, load_view


def inspect_pid(
    pid: int, window: float = 5.0, *, native: bool = False, evidence_path: str | Path | None = None
) -> Incident:
    """Sample the job that ``pid`` belongs to for ``window`` seconds, diagnose it, and return the incident
    (what ``hangwatch inspect PID --json`` prints). Raises ``hangwatch.errors.CaptureError`` when the
    process cannot be read (gone, or not permitted); nothing is signalled or changed in the job."""
    from hangwatch.atomic import write_text_atomic
    from hangwatch.capture import capture_job
    from hangwatch.diagnose import diagnose
    from hangwatch.diagnose.assemble import build_incident
    from hangwatch.evidence_io import evidence_to_json
    from hangwatch.supervise.options import DEFAULTS

    evidence = capture_job(pid, window, native=True if native else None)
    # inspect acts on nothing and has no clock: a timer is judged against the default --max-slow
    evidence = dataclasses.replace(evidence, timer_bound_s=float(DEFAULTS["max_slow"]))
    if evidence_path is not None:
        write_text_atomic(Path(evidence_path), evidence_to_json(evidence))
    return build_incident(evidence, diagnose(evidence))


def read_run(run_dir: str | Path) -> RunView:
    """One run directory as `hangwatch ls` sees it: state, progress, money, newest incident."""
    return load_view(Path(run_dir))


def list_runs(dirs: Iterable[str | Path] = ()) -> list[RunView]:
    """The runs in ``dirs`` (each a run directory, or a directory of them); with none, this user's index."""
    paths = [Path(d) for d in dirs]
    return [load_view(p) for p in find_runs(paths, use_index=not paths)]


def read_incident(path: str | Path) -> Incident:
    """An ``incident.json`` (or its incident directory) read back as an ``Incident``."""
    return Incident.from_dict(json.loads(incident_file(Path(path)).read_text()))
