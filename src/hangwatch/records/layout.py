"""The run directory: every name in it, declared once, and the one way to read it back.

The supervisor writes it (supervise/books/rundir.py); `ls`, `watch`, `report`, the exit-code history and the
library API read it. None of them spells a file name: they ask a ``RunLayout``. Reading never raises for a run
that is being written or was cut short: a torn last line of events.jsonl, a summary.json or incident.json that
does not parse, is left out (the writer writes each JSON file atomically, so a torn one is damage, not a race).
docs/reference.md's table of files is generated from ``FILES``.

What runs inside the job spells its own names: the startup hook (_autobeat/_hangwatch_hook/, where hangwatch may
not be importable) writes ``CHECKPOINTS``, ``BEAT_SUFFIX`` slots and the flight registry, and ``hangwatch.beat``
(kept light to import) its ``BEAT_SUFFIX`` slot; tests/unit/test_layout.py checks that they agree.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from hangwatch.records.values import frozen

OUTPUT_LOG = "output.log"
OUTPUT_BUFFER = 64 * 1024  # output.log's write buffer (supervise/job/launch.py OutputLog); a larger chunk goes straight
EVENTS = "events.jsonl"
SUMMARY = "summary.json"
PAGE = "report.html"
HEARTBEAT = "heartbeat"
CHECKPOINTS = "checkpoints.jsonl"  # in heartbeat/
BEAT_SUFFIX = ".hb"  # heartbeat/<pid>.hb: each process's 128-byte heartbeat slot
FLIGHT_PREFIX = "flight-"  # heartbeat/flight-<pid>.json: where a rank serves its flight recorder
LOADER_SUFFIX = ".dl"  # heartbeat/<pid>-<n>.dl: the batches the workers of a DataLoader iterator hold
HEAL_REQUEST_SUFFIX = ".heal"  # heartbeat/<pid>-<n>.heal: hangwatch asks that iterator to replace a worker
HEAL_ANSWERS_SUFFIX = ".heals"  # heartbeat/<pid>-<n>.heals: what it did, one JSON line per heal
HEAL_TAKEN_PREFIX = "heal-taken-"  # heartbeat/heal-taken-K: heal K of an attempt's allowance, taken by a process
BORN = "born"  # heartbeat/born/<pid>-<start ticks>: a Python process of the job started (written by its startup hook)
WORKER_DEATHS = "worker-deaths.jsonl"  # heartbeat/: a DataLoader iterator raised with a worker dead (its exit code)
SKIPPED = "skipped.jsonl"
INCIDENTS = "incidents"
INCIDENT = "incident.json"
REPORT = "report.md"
FLIGHT = "flight"  # incidents/NNN/flight/rank-<r>.json
WRITE_TEST = ".hangwatch-write-test"

# (path in the run directory, what it holds): the reference page's table.
FILES: tuple[tuple[str, str], ...] = (
    (
        OUTPUT_LOG,
        "the job's stdout and stderr, byte for byte, every attempt appended (rotated as output.log.1 ... "
        "with --log-max-size); in the file a second or so after the job wrote it (the terminal gets it at once). "
        "Under a terminal, or where hangwatch's own stdout and stderr are one file (`2>&1`), the job's two streams "
        "are one: in the order it wrote them; else each stream's bytes in order, the two as they were read",
    ),
    (
        EVENTS,
        "one JSON object a line: start, launch, progress, probe, suspect, incident, terminate, restart, exit, pause "
        "(`held_by`: the reader of hangwatch's output held the job) ... (`hangwatch report` prints the timeline)",
    ),
    (
        SUMMARY,
        "the run as of now, rewritten atomically every few seconds: state, attempts, step, rate, ETA, "
        "incidents, stalled time, goodput, cost, exit code and why",
    ),
    (
        PAGE,
        "the run's page: timeline, rates, every incident (opens offline; rewritten at each incident and at the end)",
    ),
    (
        SKIPPED,
        "each sample `--on-hang heal` left out (it hung twice): index, what it is where known, batch, dataset, why, "
        "when, the attempt and the incident",
    ),
    (
        f"{INCIDENTS}/NNN/{INCIDENT}",
        "one incident (hangwatch.incident/1): verdict, findings with cause, where, "
        "evidence, fix and proof, processes, the wait-for graph, GPUs and kernel log, the action taken",
    ),
    (f"{INCIDENTS}/NNN/{REPORT}", "the same incident as Markdown"),
    (
        f"{INCIDENTS}/NNN/{FLIGHT}/rank-R.json",
        "each rank's whole flight recorder dump, for torch's own analyser "
        "(`python -m torch.distributed.flight_recorder.fr_trace`)",
    ),
    (f"{HEARTBEAT}/", "where the job's startup hook writes its heartbeat, progress and checkpoints (mode 0700)"),
    (
        f"{HEARTBEAT}/PID{BEAT_SUFFIX}",
        "each process's heartbeat slot (memory-mapped, 128 bytes): its beats, step and "
        "phase, written by `hangwatch.beat()`, the autobeat hook and the DataLoader wrapper",
    ),
    (f"{HEARTBEAT}/{CHECKPOINTS}", "each checkpoint the job saved (path, step, kind): what a restart resumes from"),
    (f"{HEARTBEAT}/{FLIGHT_PREFIX}PID.json", "where rank PID serves its flight recorder (a unix socket or a FIFO)"),
    (
        f"{HEARTBEAT}/PID-N{LOADER_SUFFIX}",
        "under --on-hang heal, the batch and sample indices each worker of the N-th DataLoader iterator of process PID "
        "holds (memory-mapped, written by the autobeat hook; removed when the iterator's workers end)",
    ),
    (
        f"{HEARTBEAT}/PID-N{HEAL_REQUEST_SUFFIX}",
        "`--on-hang heal`: hangwatch asks that iterator to replace a worker (JSON: seq, worker, pid, batch, sample)",
    ),
    (
        f"{HEARTBEAT}/PID-N{HEAL_ANSWERS_SUFFIX}",
        "what the job did about each ask, and each dead worker it replaced unasked (one JSON line each)",
    ),
    (
        f"{HEARTBEAT}/{BORN}/PID-TICKS",
        "a Python process of the job started (its parent, name and command line; written by the startup hook at "
        "its start and after each fork, read and removed by hangwatch's next look at the tree): a worker that "
        "lives and dies between two looks is known all the same",
    ),
    (
        f"{HEARTBEAT}/{WORKER_DEATHS}",
        "a DataLoader iterator raised with a worker of it dead, one JSON line each (the main pid, each dead worker's "
        "pid and exit code, the error): a crash is named from it when the job's traceback does not say",
    ),
    (
        f"{HEARTBEAT}/{HEAL_TAKEN_PREFIX}K",
        "heal K of the attempt's --max-heals, taken (created exclusively by whichever process of the job heals)",
    ),
)


@frozen
class RunLayout:
    """The paths of one run directory, and its readers (which never raise)."""

    root: Path

    @property
    def output_log(self) -> Path:
        """The job's output."""
        return self.root / OUTPUT_LOG

    @property
    def events(self) -> Path:
        """events.jsonl."""
        return self.root / EVENTS

    @property
    def summary(self) -> Path:
        """summary.json."""
        return self.root / SUMMARY

    @property
    def page(self) -> Path:
        """report.html."""
        return self.root / PAGE

    @property
    def heartbeat(self) -> Path:
        """The heartbeat directory the job's hook writes to."""
        return self.root / HEARTBEAT

    @property
    def checkpoints(self) -> Path:
        """heartbeat/checkpoints.jsonl."""
        return self.heartbeat / CHECKPOINTS

    @property
    def births(self) -> Path:
        """heartbeat/born/: the job's Python processes, each as it started."""
        return self.heartbeat / BORN

    @property
    def incidents(self) -> Path:
        """The incidents directory."""
        return self.root / INCIDENTS

    def incident_dir(self, number: int) -> Path:
        """incidents/NNN (three digits at least: 001, ..., 999, 1000)."""
        return self.incidents / f"{number:03d}"

    def incident_dirs(self) -> list[Path]:
        """Every incidents/NNN, oldest first."""
        if not self.incidents.is_dir():
            return []
        return sorted(
            (p for p in self.incidents.iterdir() if p.name.isdigit() and p.is_dir()), key=lambda p: int(p.name)
        )

    def next_incident(self) -> int:
        """The number the next incident gets: one past the highest there (a gap is never filled)."""
        dirs = self.incident_dirs()
        return int(dirs[-1].name) + 1 if dirs else 1

    def damaged(self) -> list[str]:
        """The JSON files that are there but do not parse, as paths in the run directory: a reader leaves them out
        and says so."""
        out = [SUMMARY] if self.summary.exists() and self.summary_dict() is None else []
        for d in self.incident_dirs():
            if not isinstance(read_json(d / INCIDENT), dict):
                out.append(f"{INCIDENTS}/{d.name}/{INCIDENT}")
        return out

    def is_run(self) -> bool:
        """Whether this is a run directory (`hangwatch run` made it: it has events.jsonl)."""
        return self.events.is_file()

    # --- reading back: one policy ----------------------------------------------------------------------------
    def event_dicts(self, upto: int | None = None) -> list[dict[str, Any]]:
        """events.jsonl's objects (``upto``: in its first bytes only); a line that does not parse (a torn last
        line) is left out."""
        try:
            with open(self.events, "rb") as f:
                text = f.read(-1 if upto is None else upto).decode(errors="replace")
        except OSError:
            return []
        out = []
        for ln in text.splitlines():
            d = _loads(ln)
            if isinstance(d, dict):
                out.append(d)
        return out

    def skipped(self) -> Path:
        """skipped.jsonl: the samples heal left out."""
        return self.root / SKIPPED

    def worker_deaths(self) -> list[dict[str, Any]]:
        """heartbeat/worker-deaths.jsonl's objects; a line that does not parse is left out."""
        try:
            text = (self.heartbeat / WORKER_DEATHS).read_text(errors="replace")
        except OSError:
            return []
        return [d for d in (_loads(ln) for ln in text.splitlines()) if isinstance(d, dict)]

    def skipped_dicts(self) -> list[dict[str, Any]]:
        """skipped.jsonl's objects; a line that does not parse is left out."""
        try:
            text = self.skipped().read_text(errors="replace")
        except OSError:
            return []
        return [d for d in (_loads(ln) for ln in text.splitlines()) if isinstance(d, dict)]

    def summary_dict(self) -> dict[str, Any] | None:
        """summary.json, or None where it is missing or does not parse."""
        d = read_json(self.summary)
        return d if isinstance(d, dict) else None

    def incident_dicts(self) -> list[tuple[int, dict[str, Any]]]:
        """(number, incident.json) of every incident that parses, oldest first."""
        out = []
        for d in self.incident_dirs():
            data = read_json(d / INCIDENT)
            if isinstance(data, dict):
                out.append((int(d.name), data))
        return out


def incident_file(path: Path) -> Path:
    """An incident's file, given it or its directory."""
    return path / INCIDENT if path.is_dir() else path


def flight_registry(heartbeat_dir: Path, pid: int) -> Path:
    """heartbeat/flight-<pid>.json: where a rank says it serves its flight recorder."""
    return heartbeat_dir / f"{FLIGHT_PREFIX}{pid}.json"


def loader_files(heartbeat_dir: Path, pid: int) -> list[Path]:
    """heartbeat/<pid>-<n>.dl: the DataLoader iterators of process ``pid`` that recorded their workers' batches."""
    return sorted(heartbeat_dir.glob(f"{pid}-*{LOADER_SUFFIX}"))


def read_json(path: Path) -> Any:
    """A JSON file, or None where it is missing or does not parse."""
    try:
        return _loads(path.read_text(errors="replace"))
    except OSError:
        return None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def default_run_dir(argv: list[str], now: float | None = None) -> Path:
    """hangwatch-runs/<UTC yyyymmdd-HHMMSS>-<cmd name>."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    return Path("hangwatch-runs") / f"{stamp}-{command_name(argv)}"


def command_name(argv: list[str]) -> str:
    """`python train.py` -> train; `python -m pkg.mod` -> pkg.mod; `torchrun ... train.py` -> train."""
    name = os.path.basename(argv[0]) if argv else "job"
    for i, a in enumerate(argv[1:], 1):
        if a == "-m" and i + 1 < len(argv):
            return _safe(argv[i + 1])
        if a.endswith(".py"):
            return _safe(Path(a).stem)
    return _safe(name)


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)[:40] or "job"
