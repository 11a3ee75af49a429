"""Heal in place (`--on-hang heal`): a DataLoader worker stuck on a sample, or dead, is replaced inside the job and
handed its batches again; a sample that hangs twice is left out and recorded. Real DataLoaders (fork and spawn,
2 and 4 workers, persistent and not) training a real model: the job finishes in one attempt, and no batch is lost or
repeated."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FAST, SCENARIOS, marker, py

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

BAD, N, BATCH = 21, 64, 4


def _trained(out):
    return json.loads(out.read_text())


def _epochs(seen, epochs=2):
    """The sample indices each epoch trained on, sorted (steps are in order: an epoch is its share of them)."""
    per = len(seen) // epochs
    return [sorted(i for batch in seen[e * per : (e + 1) * per] for i in batch) for e in range(epochs)]


def _heals(run):
    return [e for e in run.events() if e["event"] == "heal"]


def _healing(run):
    """The incidents whose action was a heal, oldest first (a startup probe may have written one before)."""
    found = [json.loads(p.read_text()) for p in sorted(run.dir.glob("incidents/*/incident.json"))]
    return [i for i in found if i["action"] == "healed"]


def test_a_flaky_sample_is_retried_by_a_fresh_worker_and_a_dead_one_is_replaced_unasked(run, tmp_path):
    """Spawned, persistent workers. The read of sample 21 never returns once (a mount that stopped answering): the worker is
    replaced inside the job, handed batch 5 again, and the read succeeds. Later the worker reading sample 45 is
    killed (the OOM killer): torch would raise "DataLoader worker ... is killed by signal"; under heal the job
    replaces it at its next wait, unasked. One attempt, every sample of both epochs trained on once."""
    out = tmp_path / "out.json"
    args = ("--mode", "flaky", "--die-at", "45", "--spawn", "--persistent", "--state", str(tmp_path), "--out", str(out))
    r = run(*FAST, "--on-hang", "heal", *py("dl_heal.py", *args))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    s = run.summary()
    assert (s["attempts"], s["heals"], s["skipped_samples"]) == (1, 2, 0), s
    incident = _healing(run)[0]
    root = incident["findings"][0]
    assert root["cause"] == "dataloader.worker_stuck", root
    assert (root["where"]["file"], root["where"]["line"]) == marker("dl_heal.py")
    assert any("is replaced inside the job and handed batch 5 again" in e for e in root["evidence"]), root
    asked, died = [e for e in _heals(run) if e["outcome"] == "healed"]
    assert (asked["seq"], asked["action"], asked["batch"]) == (1, "retried", 5), asked
    assert asked["pid"] != asked["old_pid"]
    assert (died["seq"], died["died"]) == (None, "killed by signal 9") and 11 in died["batches"], died
    assert _epochs(_trained(out)["seen"]) == [list(range(N))] * 2
    assert not run.dir.joinpath("skipped.jsonl").exists()
    assert b"batch 5 and the ones after it were handed to it again" in r.stderr
    assert b", dead: killed by signal 9) was replaced inside the job by pid" in r.stderr


def test_a_poisoned_sample_is_skipped_recorded_and_training_equals_a_clean_run_without_it(run, tmp_path):
    """Sample 21 never returns, ever: retried once, then its batch is handed without it, and it is left out of the
    second epoch too. The model's final weights equal a clean run's that leaves 21 out of its batch (4 persistent
    workers): no batch was lost or repeated."""
    out, clean = tmp_path / "out.json", tmp_path / "clean.json"
    job = ("--workers", "4", "--persistent", "--state", str(tmp_path))
    r = run(*FAST, "--on-hang", "heal", *py("dl_heal.py", "--mode", "poison", *job, "--out", str(out)))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    s = run.summary()
    assert (s["attempts"], s["heals"], s["skipped_samples"]) == (1, 2, 1), s
    (skipped,) = (json.loads(line) for line in run.dir.joinpath("skipped.jsonl").read_text().splitlines())
    assert (skipped["index"], skipped["batch"], skipped["dataset"]) == (BAD, 5, "Shards"), skipped
    assert "/mnt/shards/shard-0021.bin" in skipped["sample"] and skipped["incident"], skipped
    second = _healing(run)[1]["findings"][0]["evidence"]
    assert any("batch 5 hung before" in e and "without sample 21" in e for e in second), second
    subprocess.run(
        [sys.executable, str(SCENARIOS / "dl_heal.py"), "--skip", str(BAD), *job, "--out", str(clean)],
        check=True,
        capture_output=True,
        timeout=60,
        cwd=SCENARIOS,
    )
    healed, twin = _trained(out), _trained(clean)
    assert healed["seen"] == twin["seen"] and all(BAD not in batch for batch in healed["seen"])
    assert healed["weights"] == twin["weights"]
    assert b"was handed to it without sample 21" in r.stderr
    assert b"hangwatch: 2 DataLoader worker(s) healed in place; 1 sample(s) left out, listed in " in r.stderr


def test_an_iterable_dataset_is_not_healed_it_is_restarted_and_the_incident_says_why(run):
    r = run(*FAST, "--on-hang", "heal", "--max-restarts", "0", *py("dl_bad_sample.py", "--iterable"))
    assert r.returncode == 125, r.stderr.decode()[-2000:]
    incident = run.hang()
    root = incident["findings"][0]
    assert root["cause"] == "dataloader.worker_stuck", root
    assert any("not healed in place: its dataset is an IterableDataset" in e for e in root["evidence"]), root
    assert [e["outcome"] for e in _heals(run)] == ["not_healed"]
    assert run.summary()["heals"] == 0
    assert b"not healed in place: its dataset is an IterableDataset" in r.stderr


def test_healthy_twins_a_slow_sample_and_a_clean_job_are_untouched_by_heal(run, tmp_path):
    """A sample that takes 3 s once (a slow read, the worker sleeping in it) is work, not a hang: no heal, no
    restart, every batch once."""
    out = tmp_path / "out.json"
    r = run(
        *FAST, "--on-hang", "heal", *py("dl_heal.py", "--mode", "slow", "--state", str(tmp_path), "--out", str(out))
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    s = run.summary()
    assert (s["attempts"], s["heals"]) == (1, 0), s
    assert _heals(run) == []
    found = [json.loads(p.read_text()) for p in run.dir.glob("incidents/*/incident.json")]
    assert all(i["action"] == "none" for i in found), found
    assert _epochs(_trained(out)["seen"]) == [list(range(N))] * 2


def test_a_worker_asleep_on_a_timer_is_slow_and_one_asleep_for_years_is_a_proven_hang(start_job, tmp_path):
    """Found under CI load: a worker caught in a 3 s `time.sleep` in __getitem__ was "blocked ... nothing moved" and
    hung at --min-stall 1 (heal then replaced a healthy worker). A timed sleep ends by itself: slow, bounded by
    --max-slow, like a sleeping rank; a timer the kernel shows ending after every bound is a proven hang."""
    from conftest import inspect_json, root_cause

    slow, forever = (
        start_job(
            [sys.executable, str(SCENARIOS / "dl_heal.py"), "--mode", "slow", "--slow-s", seconds, "--state", state]
        )
        for seconds, state in (("60", str(tmp_path)), ("1e9", str(tmp_path / "f")))
    )
    incident = inspect_json(slow.pid, window=2.5)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"]) == ("slow", "dataloader.worker_slow"), root
    assert (root["where"]["file"], root["where"]["line"]) == marker("dl_heal.py", "SLEEP-HERE")
    assert "its timer ends by itself" in root["summary"], root["summary"]
    root = root_cause(incident := inspect_json(forever.pid, window=2.5))
    assert (incident["verdict"], root["cause"]) == ("hung", "dataloader.worker_stuck"), root
    assert root["proof"]["kind"] == "hang" and "ends in" in root["proof"]["fact"], root["proof"]


def test_a_real_lightning_job_with_a_poisoned_sample_finishes_under_heal(run):
    """Lightning's own fit loop, 2 workers, item 5 never returns: retried, then skipped; the second epoch (a new
    iterator) never sends it again. One attempt, exit 0."""
    r = run(*FAST, "--on-hang", "heal", *py("lightning_job.py", "--poison", "5", "--sleep-ms", "5", "--items", "32"))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    s = run.summary()
    assert (s["attempts"], s["heals"], s["skipped_samples"]) == (1, 2, 1), s
    (skipped,) = (json.loads(line) for line in run.dir.joinpath("skipped.jsonl").read_text().splitlines())
    assert (skipped["index"], skipped["dataset"]) == (5, "Items"), skipped
    assert _healing(run)[0]["findings"][0]["where"]["line"] == marker("lightning_job.py", "HANG-HERE:poison")[1]


def test_a_real_hf_trainer_job_with_a_poisoned_sample_finishes_under_heal(run, tmp_path):
    """transformers' Trainer, 2 workers, a random sampler: item 7 never returns; the Trainer finishes its 64 steps."""
    job = ("--steps", "64", "--workers", "2", "--poison", "7", "--out", str(tmp_path / "hf"))
    r = run(*FAST, "--on-hang", "heal", *py("hf_trainer_job.py", *job))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert b"done" in r.stdout
    s = run.summary()
    assert (s["attempts"], s["heals"], s["skipped_samples"]) == (1, 2, 1), s
    (skipped,) = (json.loads(line) for line in run.dir.joinpath("skipped.jsonl").read_text().splitlines())
    assert (skipped["index"], skipped["dataset"]) == (7, "Items"), skipped
