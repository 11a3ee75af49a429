"""Property tests for everything that parses what a job or a user controls: no input crashes the
supervisor, bad settings are one clear UsageError, and records read back what was written."""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hangwatch.causes import Cause
from hangwatch.errors import UsageError
from hangwatch.records.incident import (
    Action,
    Finding,
    FrameRecord,
    Incident,
    LastProgress,
    ProcessRecord,
    ThreadRecord,
    Verdict,
    Where,
)
from hangwatch.supervise.config import build_config
from hangwatch.supervise.progress.counters import TAIL_BYTES, OutputTail, ProgressParser
from hangwatch.supervise.progress.heartbeat import read_heartbeats

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
LOGLIKE = st.lists(
    st.sampled_from(
        [
            b"step ",
            b"iter",
            b"/",
            b" ",
            b"\r",
            b"\n",
            b"\x1b[2K",
            b"1",
            b"23",
            b"4,5",
            b"6_7",
            b"0.5",
            b"e-4",
            b"%",
            b"it/s",
            b"epoch",
            b"[rank1]:",
            b"[default0]:",
            b"{'loss': '1.0', 'epoch': '0.1'}",
            b"12:00:01",
            b"\xff\xfe",
            b"\x00",
        ]
    ),
    max_size=80,
).map(b"".join)


@FAST
@given(chunks=st.lists(st.one_of(st.binary(max_size=3000), LOGLIKE), max_size=12))
def test_the_progress_parser_takes_any_bytes_quickly(chunks):
    parser, tail = ProgressParser(), OutputTail()
    for chunk in chunks:
        tail.add(chunk, 1.0)
        data = tail.snapshot()[2]
        t0 = time.thread_time()  # (CPU time: the suite's other workers on the same cores do not count)
        parser.latest(data)
        parser.by_rank(data)
        assert time.thread_time() - t0 < 0.5  # per poll, whatever the job prints
    assert len(tail.snapshot()[2]) <= TAIL_BYTES


def _patterns() -> dict[str, re.Pattern]:  # type: ignore[type-arg]
    """Every pattern hangwatch keeps at a module's top level, alone or in a tuple, list or dict, or in a dataclass there
    (the crash signatures): what it runs over a job's output, its source lines and its command lines."""
    import dataclasses
    import importlib
    import pkgutil

    import hangwatch

    found: dict[str, re.Pattern] = {}  # type: ignore[type-arg]  # str and bytes ones

    def take(where: str, value: object, depth: int = 0) -> None:
        if isinstance(value, re.Pattern):
            found[where] = value
        elif depth < 3 and isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                take(f"{where}[{i}]", v, depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for k, v in value.items():
                take(f"{where}[{k!r}]", v, depth + 1)
        elif depth < 3 and dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                take(f"{where}.{f.name}", getattr(value, f.name), depth + 1)

    for m in pkgutil.walk_packages(hangwatch.__path__, "hangwatch."):
        if "_autobeat" in m.name or m.name.endswith(("__main__", "_exec", "_guard")):
            continue  # started as programs, or installed into the job
        module = importlib.import_module(m.name)
        for name, value in vars(module).items():
            take(f"{m.name}.{name}", value)
    return found


# Runs of one or two characters of each kind a line holds: a long word, dotted names, digits, spaces, punctuation.
LONG_RUNS = ("x", "X", "1", " ", "a.", "1.", "a1", "a_", "-a", "a:", "a=", "a/", "[a", "(a", "a,", '"a', "'a", "\t")
FORMS = ("[a", "Process rank", "with a", "for ", "0: ", 'File "')  # what a pattern reads, before a long run


def _long_texts() -> list[str]:
    runs = [unit * (16384 // len(unit)) for unit in LONG_RUNS]
    return runs + [form + unit * (16384 // len(unit)) + "y" for form in FORMS for unit in ("1", " ", "x", "a.", "in ")]


def test_no_pattern_hangwatch_runs_over_text_takes_longer_than_linear_time():
    """A look reads 64 KiB of the job's output, and a generated source line can be long: a pattern that tries each
    start of a run against the rest of it takes seconds on one long word (the redaction took 11 s on 20 KB), holding
    the interpreter while the output pump waits, and the job with it, its pipe full."""
    patterns = _patterns()
    assert len(patterns) > 60  # the walk found them (the crash signatures among them)
    slow = []
    texts = _long_texts()
    for where, pattern in patterns.items():
        for text in texts if isinstance(pattern.pattern, str) else [t.encode() for t in texts]:
            t0 = time.perf_counter()
            pattern.search(text)
            for _ in zip(range(3), pattern.finditer(text), strict=False):
                pass
            if time.perf_counter() - t0 > 0.2:  # linear: about 1 ms; quadratic on 16 KB: 1 to 30 s
                slow.append((where, text[:20]))
    assert not slow


@FAST
@given(files=st.lists(st.binary(max_size=300), max_size=6))
def test_heartbeat_slots_that_are_truncated_or_garbage_are_skipped(tmp_path_factory, files):
    d = tmp_path_factory.mktemp("hb")
    for i, raw in enumerate(files):
        (d / f"{100 + i}.hb").write_bytes(raw)
    (d / "not-a-slot.txt").write_bytes(b"x")
    for hb in read_heartbeats(d):
        assert hb.count >= 0


TOML_VALUES = st.one_of(
    st.integers(-5, 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _toml_value(v: object) -> str:
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {x}" for k, x in v.items()) + "}"
    return json.dumps(v)


@FAST
@given(
    text=st.text(max_size=200),
    pairs=st.dictionaries(
        st.sampled_from(
            [
                "min_stall",
                "startup_grace",
                "on_hang",
                "max_restarts",
                "fallback",
                "notify",
                "kill_grace",
                "capture_window",
                "max_slow",
                "progress_regex",
                "cost_per_hour",
                "autobeat",
                "auto_fallback",
                "remedies",
                "bogus",
            ]
        ),
        TOML_VALUES,
        max_size=5,
    ),
)
def test_any_hangwatch_toml_is_accepted_or_one_usage_error(tmp_path_factory, text, pairs):
    path = Path(tmp_path_factory.mktemp("cfg")) / "hangwatch.toml"
    for body in (text, "\n".join(f"{k} = {_toml_value(v)}" for k, v in pairs.items())):
        path.write_text(body)
        try:
            build_config(["true"], {}, str(path), use_pty=False)
        except UsageError as e:
            assert str(e) and "\n" not in str(e)


@FAST
@given(fallback=st.text(max_size=60))
def test_any_fallback_string_is_accepted_or_one_usage_error(fallback):
    try:
        build_config(["true"], {"fallback": (fallback,)}, None, use_pty=False)
    except UsageError as e:
        assert "\n" not in str(e)


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)+$", r"(.*a){12}", r"(\w+\s?)*$"])
def test_a_catastrophic_progress_regex_gets_a_clear_error(pattern):
    with pytest.raises(UsageError, match="backtrack"):
        build_config(["true"], {"progress_regex": pattern}, None, use_pty=False)


def test_a_user_regex_is_only_run_on_a_bounded_record():
    parser = ProgressParser(re.compile(r"x(?P<step>\d+)y"))
    tail = OutputTail()
    tail.add(b"x" * 5000 + b"\n", 1.0)
    t0 = time.thread_time()
    parser.latest(tail.snapshot()[2])
    assert time.thread_time() - t0 < 0.5


FRAMES = st.builds(FrameRecord, function=st.text(max_size=10), file=st.text(max_size=20), line=st.integers(0, 10**5))
WHERE = st.builds(
    Where,
    pid=st.integers(1, 10**6),
    rank=st.none() | st.integers(0, 64),
    tid=st.none() | st.integers(1),
    file=st.none() | st.text(max_size=20),
    line=st.none() | st.integers(0),
    function=st.none() | st.text(max_size=10),
    code=st.none() | st.text(max_size=20),
)
FINDINGS = st.builds(
    Finding,
    cause=st.sampled_from(list(Cause)),
    confidence=st.floats(0, 1),
    summary=st.text(max_size=40),
    where=st.none() | WHERE,
    evidence=st.tuples(st.text(max_size=20)),
    fix=st.tuples(st.text(max_size=9)),
)
PROCS = st.builds(
    ProcessRecord,
    pid=st.integers(1),
    ppid=st.integers(0),
    role=st.sampled_from(["main", "rank"]),
    rank=st.none() | st.integers(0, 8),
    state=st.sampled_from("RSDTZ"),
    cpu_percent=st.none() | st.floats(0, 800),
    cmdline=st.text(max_size=30),
    threads=st.tuples(
        st.builds(
            ThreadRecord, tid=st.integers(1), name=st.text(max_size=8), idle=st.booleans(), frames=st.tuples(FRAMES)
        )
    ),
    where=st.tuples(FRAMES),
)


@FAST
@given(
    verdict=st.sampled_from(Verdict),
    action=st.sampled_from(Action),
    procs=st.lists(PROCS, max_size=3),
    findings=st.lists(FINDINGS, max_size=3),
    remedy=st.none() | st.text(max_size=30),
    lp=st.none()
    | st.builds(LastProgress, at=st.floats(0, 2e9), step=st.none() | st.integers(0), source=st.text(max_size=8)),
)
def test_an_incident_written_reads_back_the_same(verdict, action, procs, findings, remedy, lp):
    import json

    incident = Incident(
        verdict=verdict,
        detected_at=1.5,
        last_progress=lp,
        attempt=2,
        action=action,
        processes=tuple(procs),
        findings=tuple(findings),
        window_seconds=1.0,
        remedy=remedy,
    )
    assert Incident.from_dict(json.loads(incident.to_json())) == incident
