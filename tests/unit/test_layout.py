"""The run directory has one owner (records/layout.py): its names are spelled there alone, the writer and every
reader go through it, and reading a run that is being written or was cut short never raises."""

from __future__ import annotations

import ast
import io
import json
import logging
from pathlib import Path

from hangwatch.records import layout
from hangwatch.records.layout import RunLayout

SRC = Path(__file__).resolve().parents[2] / "src" / "hangwatch"
NAMES = (
    layout.OUTPUT_LOG,
    layout.EVENTS,
    layout.SUMMARY,
    layout.PAGE,
    layout.CHECKPOINTS,
    layout.INCIDENT,
    layout.REPORT,
)
IN_THE_JOB = {"_autobeat/sitecustomize.py", "beat.py"}  # they run inside the job: they spell their own names
HOOK_ROOMS = "_autobeat/_hangwatch_hook/"  # and so does each room of the hook


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """The string constants of a module, docstrings left out."""
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def test_the_run_directorys_names_are_spelled_in_one_module():
    spelled = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if rel == "records/layout.py" or rel in IN_THE_JOB or rel.startswith(HOOK_ROOMS):
            continue
        for line, s in _strings(ast.parse(path.read_text())):
            if any(s == n or s.endswith("/" + n) for n in NAMES) or s.startswith(layout.FLIGHT_PREFIX) or s == "*.hb":
                spelled.append(f"{rel}:{line}: {s!r}")
    assert not spelled, "\n".join(spelled)


def test_what_runs_in_the_job_spells_the_same_names():
    hook = "".join(p.read_text() for p in sorted((SRC / HOOK_ROOMS).glob("*.py")))
    assert f'"{layout.CHECKPOINTS}"' in hook
    assert f'f"{layout.FLIGHT_PREFIX}{{' in hook
    assert f'{{os.getpid()}}{layout.BEAT_SUFFIX}"' in hook
    assert f'"{layout.LOADER_SUFFIX}"' in hook
    assert f'HEAL_REQUEST = "{layout.HEAL_REQUEST_SUFFIX}"' in hook
    assert f'HEAL_ANSWERS = "{layout.HEAL_ANSWERS_SUFFIX}"' in hook
    assert f'HEAL_TAKEN = "{layout.HEAL_TAKEN_PREFIX}"' in hook
    assert f'{{pid}}{layout.BEAT_SUFFIX}"' in (SRC / "beat.py").read_text()


def _a_real_incident():
    from hangwatch.diagnose import diagnose
    from hangwatch.diagnose.assemble import build_incident
    from hangwatch.evidence_io import evidence_from_dict

    path = Path(__file__).resolve().parents[1] / "fixtures" / "evidence" / "deadlock.json"
    ev = evidence_from_dict(json.loads(path.read_text()))
    return build_incident(ev, diagnose(ev))


def test_a_run_cut_short_is_read_without_raising_and_says_what_it_left_out(tmp_path, caplog):
    """A torn last event, a summary that does not parse, an incident cut in half, a stray folder: the readers
    (ls/watch, report, the exit-code history) read what is whole, keep each incident's own number, and say what
    they left out."""
    from hangwatch.recover.exitcode import earlier_hangs
    from hangwatch.report.run_report import load_run, render_run
    from hangwatch.runs.view import load_view

    run = RunLayout(tmp_path)
    run.events.write_text(
        json.dumps({"at": 1.0, "event": "start", "command": ["python", "t.py"]}) + "\n" + '{"at": 2.0, "ev'
    )
    run.summary.write_text('{"state": "runn')
    good = _a_real_incident()
    for n, text in ((1, '{"verdict": "hu'), (2, good.to_json()), (3, good.to_json())):
        run.incident_dir(n).mkdir(parents=True)
        (run.incident_dir(n) / layout.INCIDENT).write_text(text)
    (run.incidents / "notes").mkdir()

    assert [d.name for d in run.incident_dirs()] == ["001", "002", "003"]
    assert [n for n, _ in run.incident_dicts()] == [2, 3]
    assert run.damaged() == [layout.SUMMARY, f"{layout.INCIDENTS}/001/{layout.INCIDENT}"]
    assert [e["event"] for e in run.event_dicts()] == ["start"] and run.summary_dict() is None
    view = load_view(tmp_path)
    assert view.state.value == "dead" and view.latest_incident is not None and view.latest_incident.number == 3
    record = load_run(tmp_path)
    assert record.summary is None and len(record.events) == 1 and [n for n, _ in record.numbered()] == [2, 3]
    out = io.StringIO()
    render_run(record, out)
    text = out.getvalue()
    assert "incidents/001/incident.json: damaged" in text and "incident 002 " in text and "incident 003 " in text
    root = good.findings[0]
    with caplog.at_level(logging.WARNING):
        hangs = earlier_hangs(tmp_path)
    assert [h.text() for h in hangs] == [f"{root.cause} at {root.where.file}:{root.where.line}"] * 2
    assert "incidents/001/incident.json" in caplog.text


def test_the_writer_numbers_incidents_past_the_highest_and_past_999(tmp_path):
    from hangwatch.supervise.books.rundir import RunDir

    run = RunLayout(tmp_path)
    for n in (1, 3, 999):
        run.incident_dir(n).mkdir(parents=True)
    writer = RunDir(tmp_path)
    try:
        written = writer.write_incident(_a_real_incident())
    finally:
        writer.close()
    assert written.name == "1000" and [d.name for d in run.incident_dirs()][-2:] == ["999", "1000"]
    assert [n for n, _ in run.incident_dicts()] == [1000]


def test_the_page_rendered_from_memory_is_the_page_rendered_from_the_files(tmp_path, monkeypatch):
    """The supervisor renders report.html from what it keeps (no read of the run directory at each incident); a
    requeue's earlier run in the same directory is read once. The page is the one `hangwatch report --html` makes.
    (The page says when it was written: both renders are given one clock, or a second's tick between them differs.)"""
    import time
    import types

    from hangwatch.report import html

    monkeypatch.setattr(
        html, "time", types.SimpleNamespace(time=lambda: 1e9, strftime=time.strftime, localtime=time.localtime)
    )
    from hangwatch.records.run import EventKind, RunState, RunSummary
    from hangwatch.report.html import render_html
    from hangwatch.report.run_report import load_run
    from hangwatch.supervise.books.rundir import RunDir

    def summary(incidents):
        return RunSummary(
            command=("python", "train.py"),
            run_dir=str(tmp_path),
            state=RunState.PROGRESSING,
            attempts=1,
            exit_code=None,
            started_at=1000.0,
            ended_at=None,
            wall_seconds=30.0,
            last_step=7,
            incidents=incidents,
            stalled_seconds=12.5,
            goodput=0.6,
            remedies=({"attempt": 2, "remedy": "workers0"},),
        )

    earlier = RunDir(tmp_path)  # a requeued run's first part
    earlier.event(EventKind.START, command=["python", "train.py"])
    earlier.write_incident(_a_real_incident())
    earlier.write_summary(summary(1))
    earlier.close()
    rd = RunDir(tmp_path)
    rd.event(EventKind.START, command=["python", "train.py", "--token=abc123secret"])
    rd.event(EventKind.LAUNCH, attempt=1, pid=42)
    rd.write_incident(_a_real_incident())
    rd.write_summary(summary(2))
    memory = rd.run_record()
    assert [n for n, _ in memory.numbered()] == [1, 2] and len(memory.events) == 3
    assert render_html(memory, tmp_path) == render_html(load_run(tmp_path), tmp_path)
    assert "abc123secret" not in render_html(memory, tmp_path)
    rd.close()
