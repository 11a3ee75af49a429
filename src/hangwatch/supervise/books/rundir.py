"""Writes the run directory (its names: records/layout.py; docs/reference.md#the-run-directory)."""

from __future__ import annotations

import heapq
import io
import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from hangwatch.atomic import write_text_atomic
from hangwatch.errors import UsageError
from hangwatch.records import layout
from hangwatch.records.layout import RunLayout
from hangwatch.records.run import Event, EventKind, RunSummary
from hangwatch.redact import redact_json

if TYPE_CHECKING:
    from hangwatch.records.incident import Incident
    from hangwatch.report.run_report import RunRecord

# The progress events kept in memory for the run's page, which draws at most 600 points an attempt: at this many,
# every other one is let go and from then on one in twice as many is kept, so a run of days holds a bounded set spread
# evenly over all of it (and its newest). Kept whole, they grew for as long as the job ran.
KEPT_PROGRESS = 2400


class RunDir:
    """Writes a run's files; creating it checks the directory is writable."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.layout = RunLayout(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / layout.WRITE_TEST
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as e:
            raise UsageError(
                f"cannot write the run directory {path}: {e.strerror}",
                "Pass --run-dir with a directory you can write to",
            ) from e
        self.heartbeat_dir = self.layout.heartbeat
        self.heartbeat_dir.mkdir(mode=0o700, exist_ok=True)  # the ranks' flight recorder sockets live here
        self.layout.births.mkdir(mode=0o700, exist_ok=True)
        earlier = self.layout.events.stat().st_size if self.layout.events.is_file() else 0
        self._events = open(self.layout.events, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._lock = threading.Lock()
        self.incident_count = self.layout.next_incident() - 1  # the last one's number
        # What the page shows, kept as it is written: this run's events, incidents and newest summary; what earlier
        # runs in the same directory (a requeue) left is read once, at the first page.
        self._earlier = (earlier, self.incident_count)
        self._before: tuple[list[Event], list[tuple[int, Incident]], list[str]] | None = None
        # (write order, event): all but progress, and progress thinned (the page shows fewer)
        self._kept_events: list[tuple[int, Event]] = []
        self._kept_progress: list[tuple[int, Event]] = []  # one in every ``_stride`` progress event, evenly
        self._newest: tuple[int, Event] | None = None  # the newest progress event, kept whatever the stride
        self._written = 0
        self._stride = 1
        self._seen_progress = 0
        self._kept_incidents: list[tuple[int, Incident]] = []
        self.last_summary: RunSummary | None = None

    def open_output_log(self) -> BinaryIO:
        """output.log, appended to by every attempt (buffered: ``OutputLog`` flushes it every round)."""
        return open(self.layout.output_log, "ab", buffering=layout.OUTPUT_BUFFER)

    def event(self, kind: EventKind, **fields: Any) -> None:
        """Append one line to events.jsonl (redacted), flushed at once."""
        record = {"at": round(time.time(), 3), "event": kind.value, **fields}
        line = json.dumps(redact_json(json.loads(json.dumps(record, default=str))))
        with self._lock:
            self._events.write(line + "\n")
            self._events.flush()
            self._keep(Event.from_dict(json.loads(line)))

    def _keep(self, ev: Event) -> None:
        """Keep ``ev`` for the page: every event but progress; of progress, one in every ``_stride``, the stride
        doubled (and every other one kept let go) each time KEPT_PROGRESS are kept: evenly spread over the whole run."""
        self._written += 1
        if ev.kind != EventKind.PROGRESS:
            self._kept_events.append((self._written, ev))
            return
        self._newest = (self._written, ev)
        self._seen_progress += 1
        if (self._seen_progress - 1) % self._stride:
            return
        self._kept_progress.append(self._newest)
        if len(self._kept_progress) >= KEPT_PROGRESS:
            self._kept_progress = self._kept_progress[::2]
            self._stride *= 2

    def skipped(self, record: dict[str, Any]) -> None:
        """Append one sample heal left out to skipped.jsonl (redacted), flushed at once."""
        line = json.dumps(redact_json(json.loads(json.dumps(record, default=str))))
        with self._lock, open(self.layout.skipped(), "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def write_incident(self, incident: Incident, flight: dict[int, str] | None = None) -> Path:
        """incidents/NNN/incident.json and report.md, atomically; the incident's directory. ``flight``: each
        rank's whole flight recorder dump (rank -> JSON text), saved as flight/rank-N.json for torch's own
        analyser (``python -m torch.distributed.flight_recorder.fr_trace``)."""
        self.incident_count += 1
        d = self.layout.incident_dir(self.incident_count)
        d.mkdir(parents=True, exist_ok=True)
        write_text_atomic(d / layout.INCIDENT, incident.to_json())
        from hangwatch.report.markdown import render_markdown  # a run without incidents never needs it

        buf = io.StringIO()
        render_markdown(incident, buf)
        write_text_atomic(d / layout.REPORT, buf.getvalue())
        if flight:
            (d / layout.FLIGHT).mkdir(exist_ok=True)
            for rank, text in sorted(flight.items()):
                write_text_atomic(d / layout.FLIGHT / f"rank-{rank}.json", text)
        self._kept_incidents.append((self.incident_count, incident))
        return d

    def write_summary(self, summary: RunSummary) -> None:
        """summary.json, atomically; synced to disk only once final (a running job's is rewritten every 2 s)."""
        final = summary.ended_at is not None
        write_text_atomic(self.layout.summary, json.dumps(summary.to_dict(), indent=2), durable=final)
        self.last_summary = summary

    def run_record(self) -> RunRecord:
        """The run as its page shows it, from memory (what `hangwatch report` reads from the files): what earlier
        runs in this directory left, read once, then this run's events, incidents and newest summary."""
        from hangwatch.records.incident import Incident
        from hangwatch.report.run_report import RunRecord

        if self._before is None:
            size, count = self._earlier
            events = [Event.from_dict(d) for d in self.layout.event_dicts(upto=size)] if size else []
            incidents = []
            for n, d in self.layout.incident_dicts():
                if n <= count:
                    try:
                        incidents.append((n, Incident.from_dict(d)))
                    except (ValueError, KeyError, TypeError):  # another version's, or edited: left out, as damaged
                        continue
            self._before = (events, incidents, self.layout.damaged())
        events, incidents, damaged = self._before
        with self._lock:
            progress = self._kept_progress
            if self._newest is not None and (not progress or progress[-1] is not self._newest):
                progress = [*progress, self._newest]
            now = [e for _, e in heapq.merge(self._kept_events, progress, key=lambda x: x[0])]
        numbered = incidents + self._kept_incidents
        return RunRecord(self.last_summary, events + now, [i for _, i in numbered], [n for n, _ in numbered], damaged)

    def close(self) -> None:
        """Close events.jsonl."""
        with self._lock:
            self._events.close()
