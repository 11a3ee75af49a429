"""--deadline: the projected finish against the time a run must end by, everywhere the ETA is shown,
with a warning when it crosses the deadline and another when it comes back.

Here the tests that start no process; those that do are in tests/e2e/test_deadline.py.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hangwatch.errors import UsageError
from hangwatch.records.run import RunState, RunSummary
from hangwatch.report.banner import status_line
from hangwatch.supervise.books.deadline import DeadlineWatch, with_deadline
from hangwatch.supervise.config import parse_deadline

NOW = 1_800_000_000.0


def test_deadlines_are_read_from_now_or_as_iso_times():
    assert parse_deadline("+36h", NOW) == NOW + 36 * 3600
    assert parse_deadline("+2d12h", NOW) == NOW + 60 * 3600
    assert parse_deadline("+90m", NOW) == NOW + 5400
    assert parse_deadline("+1h30m15s", NOW) == NOW + 5415
    iso = datetime(2026, 11, 26, 18, 0, tzinfo=timezone.utc)
    assert parse_deadline("2026-11-26T18:00Z", NOW) == iso.timestamp()
    assert parse_deadline("2026-11-26T19:00+01:00", NOW) == iso.timestamp()
    for bad in ("tomorrow", "+", "+36", "36h", "2026-13-40"):
        with pytest.raises(UsageError, match="--deadline"):
            parse_deadline(bad, NOW)


def _summary(eta: float | None, ended_at: float | None = None, state: RunState = RunState.PROGRESSING) -> RunSummary:
    return RunSummary(
        command=("x",),
        run_dir="d",
        state=state,
        attempts=1,
        exit_code=None,
        started_at=NOW - 100,
        ended_at=ended_at,
        wall_seconds=100,
        last_step=50,
        incidents=0,
        stalled_seconds=0,
        goodput=1.0,
        total_steps=100,
        steps_per_s=0.5,
        eta_seconds=eta,
    )


def test_the_projection_is_now_plus_the_eta_and_a_finished_run_is_judged_by_its_end():
    s = with_deadline(_summary(eta=3600.0), NOW + 7200, NOW)
    assert (s.finish_at, s.meets_deadline, s.slack_seconds) == (NOW + 3600, True, 3600.0)
    late = with_deadline(_summary(eta=3 * 3600.0), NOW + 7200, NOW)
    assert (late.meets_deadline, late.slack_seconds) == (False, -3600.0)
    assert "60 m after the deadline" in status_line(late, 2.0)
    assert "60 m before the deadline" in status_line(s, 2.0)
    unknown = with_deadline(_summary(eta=None), NOW + 7200, NOW)
    assert (unknown.deadline, unknown.finish_at, unknown.meets_deadline) == (NOW + 7200, None, None)
    done = with_deadline(_summary(eta=None, ended_at=NOW, state=RunState.FINISHED), NOW + 60, NOW + 500)
    assert (done.finish_at, done.meets_deadline, done.slack_seconds) == (NOW, True, 60.0)
    hung = with_deadline(_summary(eta=None, ended_at=NOW, state=RunState.HUNG), NOW + 60, NOW)
    assert hung.meets_deadline is None  # it did not finish: not "in time"


def test_the_warning_comes_once_per_crossing_after_it_has_held():
    w = DeadlineWatch(NOW + 7200, hold_s=30)
    on_time, late = with_deadline(_summary(3600.0), NOW + 7200, NOW), with_deadline(_summary(9000.0), NOW + 7200, NOW)
    assert w.news(on_time, NOW) is None  # on time from the start: nothing to say
    assert w.news(late, NOW + 1) is None and w.news(on_time, NOW + 10) is None  # a dip that did not hold
    assert w.news(late, NOW + 20) is None
    text = w.news(late, NOW + 51)
    assert (
        text is not None and text.startswith("projected to miss the deadline: finish ") and "after the deadline" in text
    )
    assert w.news(late, NOW + 90) is None  # said once
    assert w.news(on_time, NOW + 100) is None
    back = w.news(on_time, NOW + 131)
    assert back is not None and back.startswith("back on time: finish ")
