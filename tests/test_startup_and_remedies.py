"""Hangs before the first step are caught by startup probes; restarts apply the fix the diagnosis
names (through the startup hook, no flag in the job). Real processes end to end, plus the pure
pieces (the probe decision, the remedy ladder, the settings)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import FAST, SCENARIOS, _free_port, clean_env, py

from hangwatch.diagnose import Diagnosis
from hangwatch.errors import UsageError
from hangwatch.incident import Finding, Verdict
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
@pytest.mark.e2e
def test_a_fork_lock_hang_before_the_first_step_is_caught_and_restarted_with_spawn(run):
    r = run(
        "--min-stall",
        "2",
        "--startup-grace",
        "120",
        "--capture-window",
        "1",
        "--kill-grace",
        "2",
        "--on-hang",
        "restart",
        *py("fork_lock.py"),
    )  # no --fallback, no flag in the job
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    probe = next(e for e in run.events() if e["event"] == "probe" and e["hung"])
    assert probe["cause"] == "fork.inherited_lock" and probe["seconds"] < 8, probe  # min-stall + window, not 900 s
    incident = run.incident()
    assert incident["action"] == "restarted" and "multiprocessing_context='spawn'" in incident["remedy"]
    assert b"remedy for fork.inherited_lock: DataLoader(multiprocessing_context='spawn')" in r.stderr
    s = run.summary()
    assert (s["attempts"], s["exit_code"], s["last_step"]) == (2, 0, 63)
    assert s["remedies"][0]["remedy"] == "spawn" and s["remedies"][0]["progressed_past"] is True


@pytest.mark.e2e
def test_a_slow_but_alive_startup_is_not_hung(run):
    r = run(
        "--min-stall",
        "2",
        "--startup-grace",
        "60",
        "--capture-window",
        "1",
        "--kill-grace",
        "2",
        "--on-hang",
        "kill",
        *py("warmup_then_train.py", "12"),
    )
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    assert not (run.dir / "incidents").exists()
    probes = [e for e in run.events() if e["event"] == "probe"]
    assert len(probes) >= 3 and not any(p["hung"] for p in probes), probes


@pytest.mark.e2e
def test_a_remedy_reaches_every_torchrun_rank(run):
    r = run(
        *FAST,
        "--startup-grace",
        "60",
        "--",
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        str(_free_port()),
        str(SCENARIOS / "dist_loader_context.py"),
        env={LOADER_ENV: '{"multiprocessing_context": "spawn"}', "HANGWATCH_REMEDY_WHY": "fork.inherited_lock"},
    )
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    out = r.stdout.decode()
    assert "rank 0 context SpawnContext batches 4" in out and "rank 1 context SpawnContext batches 4" in out, out


@pytest.mark.e2e
def test_the_spawn_remedy_falls_back_to_no_workers_for_a_loader_spawn_cannot_ship(tmp_path):
    """The spawn remedy on a dataset holding a lambda would crash the restarted job at its first
    batch: the hook sees the loader cannot be pickled and uses num_workers=0 instead, saying why."""
    from hangwatch.supervise.job.autobeat import autobeat_env

    env = clean_env(
        HANGWATCH_REMEDY_DATALOADER='{"multiprocessing_context": "spawn"}',
        HANGWATCH_REMEDY_WHY="fork.inherited_lock",
        HANGWATCH_HEARTBEAT_DIR=str(tmp_path),
    )
    env.update(autobeat_env(env, True, 60.0))
    r = subprocess.run(
        [sys.executable, str(SCENARIOS / "unpicklable_loader.py")], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "sum 240.0" in r.stdout
    assert "DataLoader(num_workers=0) (spawn needs a picklable loader: its dataset cannot be pickled" in r.stderr
