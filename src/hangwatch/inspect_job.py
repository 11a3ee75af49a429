"""`hangwatch inspect`: capture a running job, diagnose it, return the incident."""

from __future__ import annotations

from pathlib import Path

from hangwatch.atomic import write_text_atomic
from hangwatch.build import build_incident
from hangwatch.capture import capture_job
from hangwatch.diagnose import diagnose
from hangwatch.evidence_io import evidence_to_json
from hangwatch.incident import Incident


def inspect_pid(pid: int, window_s: float = 5.0, evidence_path: str | Path | None = None) -> Incident:
    """Sample the job of ``pid`` for ``window_s`` seconds and diagnose it. Raises CaptureError."""
    evidence = capture_job(pid, window_s)
    if evidence_path is not None:
        write_text_atomic(Path(evidence_path), evidence_to_json(evidence))
    return build_incident(evidence, diagnose(evidence))
