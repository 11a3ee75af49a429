"""--deadline: the projected finish against the time a run must end by, everywhere the ETA is shown,
with a warning when it crosses the deadline and another when it comes back.

Here the tests that start real processes; those that start none are in tests/unit/test_deadline.py.
"""

from __future__ import annotations

import time

import pytest
from conftest import py


@pytest.mark.e2e
def test_a_deadline_met_is_shown_in_the_summary_and_nothing_is_said(run):
    r = run(
        "--min-stall",
        "2",
        "--total-steps",
        "30",
        "--deadline",
        "+1h",
        *py("stepper.py", "--steps", "30", "--interval", "0.05"),
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    s = run.summary()
    assert s["meets_deadline"] is True and 3400 < s["slack_seconds"] < 3600 and s["finish_at"] == s["ended_at"]
    assert abs(s["deadline"] - (s["started_at"] + 3600)) < 5
    assert not [e for e in run.events() if e["event"] == "deadline"]


@pytest.mark.e2e
def test_a_deadline_missed_then_met_again_warns_once_each_way(run):
    """600 steps: 30 slow ones (the projection lands far after the 12 s deadline), then 570 ten times
    faster (it lands before it, and the run ends in time)."""
    t0 = time.time()
    r = run(
        "--min-stall",
        "1",
        "--total-steps",
        "600",
        "--deadline",
        "+12s",
        *py("stepper.py", "--steps", "600", "--interval", "0.1", "--fast-after", "30"),
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    events = [e for e in run.events() if e["event"] == "deadline"]
    assert [e["meets"] for e in events] == [False, True], events
    err = r.stderr.decode()
    assert "hangwatch: projected to miss the deadline: finish " in err and "hangwatch: back on time: finish " in err
    s = run.summary()
    assert s["meets_deadline"] is True and s["finish_at"] <= s["deadline"] and abs(s["deadline"] - (t0 + 12)) < 3
