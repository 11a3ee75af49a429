"""Remedies chosen by what they cost: the first rung of the cause's ladder that still finishes the run by
--deadline and within --budget, by measured, configured or default rates; said plainly when none does."""

from __future__ import annotations

import pytest

from hangwatch.recover.choice import DEFAULT_RATES, choose, rate_factor

NOW = 1_800_000_000.0
RUN = {"now": NOW, "steps_left": 3600, "rate": 1.0, "spent_usd": 10.0, "cost_per_hour": 3.6}  # 1 h left, $3.60


def test_without_a_deadline_or_budget_the_ladder_order_holds():
    c = choose(["workers0", "spawn"], **RUN, deadline=None, budget=None, measured={}, configured={})
    assert c is not None and (c.remedy, c.why) == ("workers0", "")
    assert choose([], **RUN, deadline=None, budget=None, measured={}, configured={}) is None


def test_the_first_rung_that_meets_the_deadline_is_taken_and_the_skipped_ones_are_said():
    # workers0 at 0.6x: 1 h 40 m to go; spawn at 1.0x: 1 h. The deadline is in 75 minutes.
    c = choose(["workers0", "spawn"], **RUN, deadline=NOW + 4500, budget=None, measured={}, configured={})
    assert c is not None and c.remedy == "spawn"
    assert c.why.startswith("spawn: 1.00x the rate (default), finish ") and "before the deadline" in c.why
    assert "; not workers0: 0.60x the rate (default)" in c.why and "after the deadline" in c.why


def test_measured_rates_beat_configured_ones_which_beat_the_defaults():
    assert rate_factor("workers0", {"workers0": 0.81}, {"workers0": 0.5}) == (0.81, "measured")
    assert rate_factor("workers0", {}, {"workers0": 0.5}) == (0.5, "hangwatch.toml")
    assert rate_factor("workers0", {}, {}) == (DEFAULT_RATES["workers0"], "default")
    c = choose(
        ["workers0", "spawn"], **RUN, deadline=NOW + 4500, budget=None, measured={"workers0": 0.95}, configured={}
    )
    assert c is not None and c.remedy == "workers0" and "0.95x the rate (measured)" in c.why
    slow = choose(
        ["workers0", "spawn"], **RUN, deadline=NOW + 4500, budget=None, measured={}, configured={"workers0": 0.001}
    )
    assert slow is not None and "not workers0: 0.001x the rate (hangwatch.toml)" in slow.why, slow.why  # not 0.00x


def test_when_no_remedy_meets_the_deadline_and_budget_it_is_said_with_the_shortfall():
    c = choose(["workers0", "spawn"], **RUN, deadline=NOW + 1800, budget=12.0, measured={}, configured={})
    assert c is not None and c.remedy == "workers0"  # the ladder's first: most likely to fix the hang
    assert c.why.startswith("no remedy meets the deadline and the budget: workers0: 0.60x")
    assert "after the deadline" in c.why and "over budget" in c.why and "spawn: 1.00x" in c.why
    # Within the budget alone, by cost: spawn finishes cheaper.
    c = choose(["workers0", "spawn"], **RUN, deadline=None, budget=14.0, measured={}, configured={})
    assert c is not None and c.remedy == "spawn" and "$13.60 in all" in c.why


# A restart that picks the rung meeting the deadline, end to end: the Lightning test in
# tests/{unit,e2e}/test_checkpoints.py (a worker hang, restarted with the chosen remedy and resumed from its checkpoint).


@pytest.mark.parametrize(
    "table", ["[remedy_rates]\nnope = 0.5\n", "[remedy_rates]\nworkers0 = 0\n", "[remedy_rates]\nworkers0 = 'fast'\n"]
)
def test_bad_remedy_rates_are_usage_errors(tmp_path, table):
    from hangwatch.errors import UsageError
    from hangwatch.supervise.config import build_config

    (tmp_path / "h.toml").write_text(table)
    with pytest.raises(UsageError, match="remedy_rates"):
        build_config(["true"], {}, str(tmp_path / "h.toml"), use_pty=False)


def test_a_probe_data_report_in_the_run_directory_gives_rates():
    from hangwatch.recover.choice import probe_rates

    report = {
        "schema": "hangwatch.probe/1",
        "baseline": {"samples_per_s": 400.0},
        "cells": [
            {
                "multiprocessing_context": "fork",
                "num_workers": 4,
                "persistent_workers": True,
                "status": "hung",
                "samples_per_s": None,
            },
            {
                "multiprocessing_context": "fork",
                "num_workers": 2,
                "persistent_workers": True,
                "status": "ok",
                "samples_per_s": 1000.0,
            },
            {
                "multiprocessing_context": "spawn",
                "num_workers": 4,
                "persistent_workers": True,
                "status": "ok",
                "samples_per_s": 900.0,
            },
            {
                "multiprocessing_context": "spawn",
                "num_workers": 2,
                "persistent_workers": False,
                "status": "ok",
                "samples_per_s": 500.0,
            },
        ],
    }
    assert probe_rates(report) == {"spawn": 0.9, "no_persistent_workers": 0.5, "fewer_workers": 1.0, "workers0": 0.4}
    assert probe_rates({"cells": []}) == {}
    assert rate_factor("workers0", {}, {"workers0": 0.7}, probe_rates(report)) == (0.4, "probe-data")
