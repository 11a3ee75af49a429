"""Hangs before the first step are caught by startup probes; restarts apply the fix the diagnosis
names (through the startup hook, no flag in the job). Real processes end to end, plus the pure
pieces (the probe decision, the remedy ladder, the settings).

Here the tests that start real processes; those that start none are in tests/unit/test_startup_and_remedies.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import FAST, SCENARIOS, _free_port, clean_env, py

from hangwatch.recover.remedy import LOADER_ENV

pytest.importorskip("torch")


# --- pure pieces -------------------------------------------------------------------------------------------


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
    # torch's import + min-stall + window (7 s here; 9.3 s once in a loaded CI run), not --startup-grace's 120 s
    assert probe["cause"] == "fork.inherited_lock" and probe["seconds"] < 20, probe
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
