"""Hangs before the first step are caught by startup probes; restarts apply the fix the diagnosis
names (through the startup hook, no flag in the job). Real processes end to end, plus the pure
pieces (the probe decision, the remedy ladder, the settings).

Here the tests that start no process; those that do are in tests/e2e/test_startup_and_remedies.py.
"""

from __future__ import annotations

import pytest

from hangwatch.diagnose import Diagnosis
from hangwatch.errors import UsageError
from hangwatch.records.incident import Finding, Verdict
from hangwatch.recover.remedy import LOADER_ENV, RemedyPlan, ladder
from hangwatch.supervise.config import build_config
from hangwatch.supervise.stall.startup import startup_decision

pytest.importorskip("torch")


def _finding(cause: str, *evidence: str) -> Finding:
    return Finding(cause, 0.9, "summary", None, evidence, ())


# --- pure pieces -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("verdict", "cause", "moved", "still_before", "hung"),
    [
        (Verdict.HUNG, "fork.inherited_lock", None, 0, True),
        (Verdict.HUNG, "code.deadlock", None, 0, True),
        (Verdict.HUNG, "process.waits_for_input", None, 0, True),
        (Verdict.WAITING, "distributed.rendezvous_wait", None, 5, False),  # bounded by --rendezvous-timeout instead
        (Verdict.HUNG, "unknown", None, 0, False),  # nothing moves, no stuck signature: probe 1 of 3
        (Verdict.HUNG, "unknown", None, 1, False),  # probe 2 of 3
        (Verdict.HUNG, "unknown", None, 2, True),  # the third still probe in a row: hung
        (Verdict.HUNG, "child.wait", None, 2, True),
        (Verdict.SLOW, "io.network_wait", None, 2, False),  # a download delivering bytes: alive
        (Verdict.SLOW, "compile.in_progress", None, 2, False),
        (Verdict.HUNG, "unknown", "new output during the capture", 2, False),
        (Verdict.HUNG, "fork.inherited_lock", "new output during the capture", 0, False),
    ],
)
def test_startup_probe_decision(verdict, cause, moved, still_before, hung):
    d = startup_decision(Diagnosis(verdict, (_finding(cause),)), moved, still_before)
    assert d.hung is hung, d
    # Alive or waiting breaks the streak of still probes; a still probe extends it.
    assert d.still == (still_before + 1 if verdict == Verdict.HUNG and moved is None else 0), d


@pytest.mark.parametrize(
    "activity",
    [
        "main (pid 5) sleeps at <module> (x.py:3): a timer will wake it",
        "a process of the job used CPU, moved data or woke up",
    ],
)
def test_a_startup_probe_that_sees_anything_move_is_not_still(activity):
    # e.g. a rank downloading while the others wait at a barrier (distributed.peer_stuck), or a sleep
    d = startup_decision(Diagnosis(Verdict.HUNG, (_finding("distributed.peer_stuck"),)), None, 2, activity)
    assert (d.hung, d.still) == (False, 0), d
    d = startup_decision(Diagnosis(Verdict.HUNG, (_finding("code.deadlock"),)), None, 0, activity)
    assert d.hung, d  # a stuck signature is judged by its rule, which already requires its culprit to be still


def test_remedies_climb_the_ladder_and_none_is_tried_twice():
    plan = RemedyPlan()
    first = plan.next_for(_finding("fork.inherited_lock"), 2)
    second = plan.next_for(_finding("fork.inherited_lock"), 3)
    assert (first.remedy, second.remedy) == ("spawn", "workers0")
    assert plan.next_for(_finding("fork.inherited_lock"), 4) is None
    assert plan.env()[LOADER_ENV] == '{"multiprocessing_context": "spawn", "num_workers": 0}'


def test_a_native_fork_hang_sets_threads_first_and_an_epoch_start_hang_drops_persistent_workers():
    assert ladder(_finding("fork.inherited_lock", "sleeps in OpenMP (libgomp)"))[0] == "omp1"
    assert (
        ladder(_finding("dataloader.worker_stuck", "main waits at an epoch start (DataLoader._reset)"))[0]
        == "no_persistent_workers"
    )
    assert ladder(_finding("code.deadlock")) == ()  # no remedy: reported, and the restart budget holds


def test_settings_for_remedies(tmp_path):
    toml = tmp_path / "hangwatch.toml"
    toml.write_text('auto_fallback = false\n[remedies]\n"fork.inherited_lock" = ["workers0"]\n')
    cfg = build_config(["true"], {}, str(toml), use_pty=False)
    assert cfg.auto_fallback is False and dict(cfg.remedies) == {"fork.inherited_lock": ("workers0",)}
    toml.write_text('[remedies]\n"fork.inherited_lock" = ["reboot"]\n')
    with pytest.raises(UsageError, match="unknown remedy 'reboot'"):
        build_config(["true"], {}, str(toml), use_pty=False)
    with pytest.raises(UsageError, match="on or off"):
        build_config(["true"], {"auto_fallback": "maybe"}, None, use_pty=False)


# --- end to end ---------------------------------------------------------------------------------------------
