"""Remedies chosen by what they cost: the first rung of the cause's ladder that still finishes the run by
--deadline and within --budget, by measured, configured or default rates; said plainly when none does."""

from __future__ import annotations

import pytest
from conftest import py

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
    c = choose(["workers0", "spawn"], **RUN, deadline=NOW + 4500, budget=None, measured={"workers0": 0.95},
               configured={})
    assert c is not None and c.remedy == "workers0" and "0.95x the rate (measured)" in c.why


def test_when_no_remedy_meets_the_deadline_and_budget_it_is_said_with_the_shortfall():
    c = choose(["workers0", "spawn"], **RUN, deadline=NOW + 1800, budget=12.0, measured={}, configured={})
    assert c is not None and c.remedy == "workers0"  # the ladder's first: most likely to fix the hang
    assert c.why.startswith("no remedy meets the deadline and the budget: workers0: 0.60x")
    assert "after the deadline" in c.why and "over budget" in c.why and "spawn: 1.00x" in c.why
    # Within the budget alone, by cost: spawn finishes cheaper.
    c = choose(["workers0", "spawn"], **RUN, deadline=None, budget=14.0, measured={}, configured={})
    assert c is not None and c.remedy == "spawn" and "$13.60 in all" in c.why


def test_a_restart_picks_the_remedy_that_meets_the_deadline(run, tmp_path):
    """The ladder says workers0 first, but at 0.02x (hangwatch.toml) it would finish far past the deadline;
    spawn keeps the rate and is chosen, and the incident, the summary and an event say why."""
    (tmp_path / "hangwatch.toml").write_text('[remedies]\n"code.deadlock" = ["workers0", "spawn"]\n'
                                             "[remedy_rates]\nworkers0 = 0.02\n")
    out = tmp_path / "ckpts"
    out.mkdir()
    r = run("--min-stall", "1", "--capture-window", "1", "--kill-grace", "2", "--on-hang", "restart",
            "--total-steps", "60", "--deadline", "+40s", "--config", str(tmp_path / "hangwatch.toml"),
            *py("ckpt_resume.py", "--steps", "60", "--hang-at", "25", "--out", str(out)))
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    incident = run.incident()
    assert incident["findings"][0]["cause"] == "code.deadlock"
    assert incident["remedy"].startswith("DataLoader(multiprocessing_context='spawn')"), incident["remedy"]
    assert "not workers0: 0.02x the rate (hangwatch.toml)" in incident["remedy"]
    (choice,) = [e for e in run.events() if e["event"] == "remedy_choice"]
    assert choice["remedy"] == "spawn" and choice["why"].startswith("spawn: 1.00x the rate (default)")
    (remedy,) = run.summary()["remedies"]
    assert remedy["remedy"] == "spawn" and "before the deadline" in remedy["why"]
    assert b"hangwatch: remedy for attempt 2: spawn: " in r.stderr


@pytest.mark.parametrize("table", ["[remedy_rates]\nnope = 0.5\n", "[remedy_rates]\nworkers0 = 0\n",
                                   "[remedy_rates]\nworkers0 = 'fast'\n"])
def test_bad_remedy_rates_are_usage_errors(tmp_path, table):
    from hangwatch.errors import UsageError
    from hangwatch.supervise.config import build_config

    (tmp_path / "h.toml").write_text(table)
    with pytest.raises(UsageError, match="remedy_rates"):
        build_config(["true"], {}, str(tmp_path / "h.toml"), use_pty=False)
