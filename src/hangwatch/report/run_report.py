"""`hangwatch report RUN_DIR`: a run's summary, its timeline of events, and each incident."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TextIO

from hangwatch.errors import UsageError
from hangwatch.incident import Incident
from hangwatch.report.text import render_text

TIMELINE_EVENTS = ("launch", "suspect", "extended", "incident", "action", "recovered", "restart", "give_up",
                   "job_exit", "signal", "exit")


def load_run(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[Incident]]:
    if not (run_dir / "events.jsonl").is_file():
        raise UsageError(f"{run_dir} is not a hangwatch run directory (no events.jsonl)",
                         "Pass a directory made by `hangwatch run`, e.g. hangwatch-runs/<time>-<cmd>")
    try:
        summary = json.loads((run_dir / "summary.json").read_text()) if (run_dir / "summary.json").exists() else {}
        events = [json.loads(ln) for ln in (run_dir / "events.jsonl").read_text().splitlines() if ln.strip()]
        incidents = [Incident.from_dict(json.loads(p.read_text()))
                     for p in sorted((run_dir / "incidents").glob("*/incident.json"))]
    except (OSError, ValueError, KeyError) as e:
        raise UsageError(f"cannot read the run in {run_dir}: {e}",
                         "Check the files were not edited or truncated") from e
    return summary, events, incidents


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t))


def render_run(summary: dict[str, Any], events: list[dict[str, Any]], incidents: list[Incident],
               out: TextIO) -> None:
    cmd = " ".join(summary.get("command", []))
    out.write(f"run: {cmd}\n")
    if summary:
        fields = [f"state {summary.get('state')}", f"attempts {summary.get('attempts')}",
                  f"exit {summary.get('exit_code')}", f"last step {summary.get('last_step')}",
                  f"incidents {summary.get('incidents')}", f"stalled {summary.get('stalled_seconds')} s",
                  f"goodput {summary.get('goodput', 0) * 100:.1f}%"]
        if "cost_usd" in summary:
            fields.append(f"cost ${summary['cost_usd']:.2f} (wasted ${summary['wasted_usd']:.2f})")
        out.write("  " + " | ".join(fields) + "\n")
    out.write("\ntimeline:\n")
    for e in events:
        if e.get("event") not in TIMELINE_EVENTS:
            continue
        detail = {k: v for k, v in e.items() if k not in ("at", "event", "command") and v not in (None, [], "")}
        text = ", ".join(f"{k}={v}" for k, v in detail.items())
        out.write(f"  {_clock(e['at'])}  {e['event']:<9} {text[:160]}\n")
    for n, incident in enumerate(incidents, 1):
        out.write(f"\nincident {n:03d} (attempt {incident.attempt}, action {incident.action.value}):\n")
        render_text(incident, out, color=False)
