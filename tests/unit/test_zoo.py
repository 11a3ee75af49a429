"""The hang zoo (bench/zoo/): every case names a public report and an expectation hangwatch can meet, and a
fast subset of real reproductions runs here, under `hangwatch inspect` (the full zoo is a bench).

Here the tests that start no process; those that do are in tests/e2e/test_zoo.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hangwatch.causes import Cause

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import zoo  # noqa: E402

# Fast to reach their hang (no torch import), from several families: threads, processes, locks, network, stdin.


def test_every_case_links_its_report_and_expects_a_known_cause():
    cases = zoo.cases()
    hangs = [c for c in cases if not c.healthy]
    assert len(hangs) >= 40 and len(cases) - len(hangs) >= 12
    for c in cases:
        assert c.report.startswith("https://"), c.name
        assert c.expect in ("hung", "waiting", "stopped", "healthy"), c.name
        if not c.healthy:
            assert c.cause in {x.value for x in Cause}, c.name
            assert all(a in {x.value for x in Cause} for a in c.accept), c.name
    assert len({c.report for c in cases}) >= 50  # one report each (a few cases share none)
