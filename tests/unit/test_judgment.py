"""Judging the new (issue [1/4]): every rule that declares a hang sooner has its healthy twin here.

- a counter that only counts is a spin / a loop that walks its data computes;
- alive but far past the job's own history is hung / a real 30 s batch is not;
- a rank whose peer never joins is waiting, then hung at --rendezvous-timeout / a late node is not;
- a job waiting at a prompt is hung at once / a prompt answered within 2 s is not;
- nothing moving and nothing known for 3 startup probes is hung / a sleep, a download delivering
  bytes, a compile are not.
Real processes end to end; the pure bounds on scripted sequences.

Here the tests that start no process; those that do are in tests/e2e/test_judgment.py.
"""

from __future__ import annotations

import pytest

from hangwatch.supervise.progress.detector import Progress, StallDetector, Strength
from unit.test_run_logic import detector_config

pytest.importorskip("torch")


# --- 1. a counter that only counts ------------------------------------------------------------------------


# --- 1. alive, bounded by the job's own history ------------------------------------------------------------


def _scripted(**cfg: float) -> StallDetector:
    det = StallDetector(detector_config(min_stall=5, startup_grace=60, **cfg), 0.0)
    for i in range(20):
        det.progress(Progress(float(i), i, "heartbeat", Strength.HEARTBEAT))  # a step a second
    return det


def test_the_history_bound_is_the_factor_times_the_median_never_below_the_floor():
    det = _scripted(history_factor=100, history_floor=60)
    bound = det.history_bound()
    assert bound is not None and bound.at == pytest.approx(19 + 100)
    assert det.history_bound(workers=4).at == pytest.approx(19 + 400)  # a worker makes every 4th batch
    assert _scripted(history_factor=10, history_floor=60).history_bound().at == pytest.approx(19 + 60)
    # Extensions stop at the bound: alive, but past it, the job is hung.
    assert det.check(19 + 6) and det.extend(19 + 6, bound)
    assert det.extended_until is not None and det.extended_until <= bound.at
    assert not det.extend(bound.at + 1, bound)
    # Too little history: no bound (the longest bound, --max-slow, holds).
    assert StallDetector(detector_config(), 0.0).history_bound() is None


def test_a_phase_is_bounded_by_the_longest_earlier_phase_of_its_name():
    det = _scripted(phase_factor=10, history_floor=3)
    det.set_phase("checkpoint", 1000.0, started=20.0, now=20.0)
    det.set_phase(None, None, now=21.5)  # a 1.5 s checkpoint
    assert det.phase_longest == {"checkpoint": 1.5}
    det.set_phase("checkpoint", 2000.0, started=30.0, now=30.0)
    bound = det.history_bound()
    assert bound is not None and bound.at == pytest.approx(30 + 15) and "'checkpoint'" in bound.basis
    assert det.deadline() == pytest.approx(45)  # not the phase's own deadline of 2000
    det.set_phase("validation", 2000.0, started=50.0, now=50.0)  # never seen before: its own deadline
    assert det.history_bound() is None and det.deadline() == 2000.0


# --- 2. peers that never join ---------------------------------------------------------------------------------


# --- 3. a job waiting for someone to type -----------------------------------------------------------------------


# --- 4. not moving and unknown is not a reason to wait 15 minutes ------------------------------------------------


# --- 5. what the diagnosis must say ---------------------------------------------------------------------------------
