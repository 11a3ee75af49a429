"""Progress without a keyhole, end to end on real jobs: heartbeats injected into any PyTorch job
(plain loops, Lightning, HF Trainer, torchrun), real progress bars under pipes and a terminal.

Here the tests that start real processes; those that start none are in tests/unit/test_autobeat.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import (
    FAST,
    RUN_TIMEOUT_S,
    SCENARIOS,
    _free_port,
    clean_env,
    only_slow_incidents,
    py,
    run_in_terminal,
)

from hangwatch.supervise.progress.heartbeat import read_heartbeats

pytest.importorskip("torch")


@pytest.mark.e2e
def test_a_silent_job_is_watched_by_its_injected_heartbeats(run):
    r = run(*FAST, "--on-hang", "kill", "--startup-grace", "60", *py("silent_train.py", "--hang-at", "40"))
    assert r.returncode == 125, r.stderr.decode()[-2000:]
    incident = run.incident()
    assert incident["last_progress"]["step"] == 40 and incident["last_progress"]["source"] == "heartbeat"
    assert incident["findings"][0]["where"]["file"].endswith("silent_train.py")
    s = run.summary()
    assert (s["progress_signal"], s["last_step"]) == ("heartbeat", 40)
    assert r.stdout == b""  # the hook itself prints nothing


@pytest.mark.e2e
def test_no_autobeat_leaves_the_job_untouched_and_says_no_signal_was_seen(run):
    r = run(*FAST, "--no-autobeat", "--startup-grace", "60", *py("silent_train.py", "--steps", "30"))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert not list((run.dir / "heartbeat").glob("*.hb"))
    s = run.summary()
    assert (s["progress_signal"], s["goodput"]) == ("none", None)


@pytest.mark.e2e
def test_the_users_sitecustomize_still_runs_and_the_hook_leaves_sys_path_alone(run):
    env = {"PYTHONPATH": f"{SCENARIOS / 'chained_site'}{os.pathsep}{SCENARIOS}"}
    r = run(*FAST, *py("show_site.py"), env=env)
    assert r.returncode == 0, r.stderr.decode()
    assert b"user-sitecustomize ran\n" in r.stdout and b"autobeat-on-path False\n" in r.stdout
    assert b"Error in sitecustomize" not in r.stderr


@pytest.mark.e2e
def test_every_torchrun_rank_beats_with_its_rank(run):
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
        str(SCENARIOS / "dist_train.py"),
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    beats = [hb for hb in read_heartbeats(run.dir / "heartbeat") if hb.rank is not None]
    assert sorted(hb.rank for hb in beats) == [0, 1]
    assert all(hb.step == 5 for hb in beats)


# --- Lightning: rich bar (nothing printed under pipes), sleeping workers --------------------------------------


# A Lightning DataLoader hang in epoch 1 under pipes, caught and restarted from Lightning's own checkpoint:
# tests/{unit,e2e}/test_checkpoints.py (test_a_lightning_worker_hang_is_caught_and_resumed_from_its_model_checkpoint).


@pytest.mark.e2e
@pytest.mark.skipif(not __import__("importlib").util.find_spec("lightning"), reason="lightning is not installed")
def test_lightning_healthy_under_pipes_with_sleeping_workers_is_never_hung(run):
    r = run(
        "--min-stall",
        "1",
        "--startup-grace",
        "120",
        "--capture-window",
        "1",
        "--on-hang",
        "kill",
        "--kill-grace",
        "2",
        *py("lightning_job.py", "--epochs", "3", "--items", "48"),
    )
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    only_slow_incidents(run)  # nothing done (under load a look at the job's exit may say slow)
    s = run.summary()
    assert (s["last_step"], s["progress_signal"], s["goodput"]) == (36, "heartbeat", 1.0)
    assert s["total_steps"] == 36  # the trainer's estimated stepping batches, read by autobeat
    assert s["attempt_stats"][0]["last_step"] == 36


@pytest.mark.e2e
@pytest.mark.skipif(not __import__("importlib").util.find_spec("lightning"), reason="lightning is not installed")
def test_lightning_rich_bar_in_a_terminal_is_read_as_the_batch_not_the_epoch(run, tmp_path):
    # No heartbeats: the rich bar alone must carry progress through epochs longer than --min-stall.
    cmd = [
        sys.executable,
        "-m",
        "hangwatch",
        "run",
        "--run-dir",
        str(run.dir),
        "--no-autobeat",
        "--min-stall",
        "3",
        "--startup-grace",
        "120",
        "--capture-window",
        "1",
        "--on-hang",
        "kill",
        "--kill-grace",
        "2",
        "--",
        sys.executable,
        str(SCENARIOS / "lightning_job.py"),
        "--epochs",
        "2",
        "--items",
        "160",
    ]
    seen = run_in_terminal(run, cmd, clean_env(COLUMNS="120"), tmp_path, RUN_TIMEOUT_S)
    p = run.proc
    assert p is not None
    assert p.returncode == 0, seen.decode(errors="replace")[-3000:]
    only_slow_incidents(run)  # nothing done (under load a look at the job's exit may say slow)
    assert "━".encode() in (run.dir / "output.log").read_bytes()  # the rich bar really rendered
    s = run.summary()
    assert s["progress_signal"] == "counter" and s["last_step"] == 40, s


# --- transformers Trainer --------------------------------------------------------------------------------
@pytest.mark.e2e
def test_hf_trainer_healthy_and_hung(run, tmp_path):
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    out = str(tmp_path / "hf")
    r = run(
        *FAST,
        "--on-hang",
        "kill",
        "--startup-grace",
        "120",
        *py("hf_trainer_job.py", "--steps", "40", "--hang-at", "20", "--out", out),
    )
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    incident = run.incident()
    assert incident["findings"][0]["where"]["function"] == "collate"
    assert incident["last_progress"]["source"] == "heartbeat" and 15 <= incident["last_progress"]["step"] < 20


@pytest.mark.e2e
def test_hf_trainer_healthy_runs_to_the_end(run, tmp_path):
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    r = run(
        "--min-stall",
        "1",
        "--startup-grace",
        "120",
        "--on-hang",
        "kill",
        "--kill-grace",
        "2",
        *py("hf_trainer_job.py", "--steps", "40", "--out", str(tmp_path / "hf")),
    )
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    only_slow_incidents(run)  # nothing done (under load a look at the job's exit may say slow)
    s = run.summary()
    assert (s["last_step"], s["progress_signal"]) == (40, "heartbeat")
    assert s["total_steps"] == 40  # state.max_steps at on_train_begin, read by autobeat
    assert json.loads((run.dir / "summary.json").read_text())["goodput"] == 1.0


@pytest.mark.e2e
@pytest.mark.timeout(420)  # the first run alone may take its 300 s bound
def test_a_resumed_hf_trainer_beats_its_global_step(run, tmp_path):
    """Resumed from checkpoint-20 with max_steps=40, the beats count 21..40 (the trainer's global step),
    so the ETA and the budget see the rest of the run, not the whole of it again."""
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    out = str(tmp_path / "hf")
    first = subprocess.run(
        [sys.executable, str(SCENARIOS / "hf_trainer_job.py"), "--steps", "20", "--save-every", "20", "--out", out],
        capture_output=True,
        timeout=300,
        env=clean_env(),
    )
    assert first.returncode == 0 and (tmp_path / "hf" / "checkpoint-20").is_dir(), first.stderr.decode()[-2000:]
    r = run(
        "--min-stall",
        "5",
        "--startup-grace",
        "120",
        *py("hf_trainer_job.py", "--steps", "40", "--save-every", "20", "--resume", "--out", out),
    )
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    s = run.summary()
    assert (s["last_step"], s["total_steps"], s["progress_signal"]) == (40, 40, "heartbeat")
    assert s["attempt_stats"][0]["first_step"] > 20
    ck = s["checkpoint"]  # the Trainer's checkpoint directory, recorded by autobeat for a restart to resume from
    assert (ck["source"], ck["step"], ck["path"]) == ("transformers", 40, str(tmp_path / "hf" / "checkpoint-40")), ck


@pytest.mark.e2e
def test_a_find_spec_probe_before_import_torch_does_not_lose_the_hook(run, tmp_path):
    # datasets/transformers ask importlib.util.find_spec("torch") before importing it.
    script = tmp_path / "probe_then_train.py"
    script.write_text(
        "import importlib.util\nassert importlib.util.find_spec('torch') is not None\n"
        "import torch\nm = torch.nn.Linear(2, 1)\no = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "for _ in range(7):\n    o.step()\n"
    )
    r = run(*FAST, "--", sys.executable, str(script))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert [hb.step for hb in read_heartbeats(run.dir / "heartbeat")] == [7]
