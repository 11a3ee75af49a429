"""The bad sample, named: the locals of a stuck worker's own loop say which batch and sample indices it holds (heal
off, the job records nothing a batch; heal on, its DataLoader records them: tests/e2e/test_heal.py), and the locals
of the dataset's code say what the sample is. Real DataLoaders, fork and spawn, map-style and iterable."""

from __future__ import annotations

import json

import pytest
from conftest import FAST, marker, only_slow_incidents, py

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def test_a_stuck_worker_is_named_with_its_batch_its_indices_and_the_samples_path(run):
    r = run(*FAST, "--on-hang", "kill", *py("dl_bad_sample.py", "--workers", "4", "--persistent"))
    assert r.returncode == 125, r.stderr.decode()[-2000:]
    incident = run.incident()
    root = incident["findings"][0]
    assert root["cause"] == "dataloader.worker_stuck", root
    assert (root["where"]["file"], root["where"]["line"]) == marker("dl_bad_sample.py")
    # batch 5 of 8 samples holds index 42; with 4 workers it went to worker 1. Heal is off: the job records nothing a
    # batch, and the look reads the batch from the worker's own loop's locals.
    assert "holds batch 5 (sample indices 40\u201347 of Shards)" in root["summary"], root["summary"]
    assert "index 42" in root["summary"] and "/mnt/shards/shard-0042.bin" in root["summary"], root["summary"]
    worker = next(p for p in incident["processes"] if p["pid"] == root["where"]["pid"])
    assert worker["holds"].startswith("holds batch 5 (sample indices 40\u201347 of Shards)"), worker
    others = [p for p in incident["processes"] if p["role"] == "dataloader_worker" and p is not worker]
    assert len(others) == 3, others
    assert list((run.dir / "heartbeat").glob("*.dl")) == []  # no record file: nothing was written a batch


def test_an_iterable_dataset_says_it_has_no_indices_and_shows_the_workers_position(run):
    r = run(*FAST, "--on-hang", "kill", *py("dl_bad_sample.py", "--iterable", "--spawn"))
    assert r.returncode == 125, r.stderr.decode()[-2000:]
    # Under load a startup probe may write an incident first (spawned workers still importing torch): a report,
    # nothing done; the hang is the incident that ended the job.
    found = [json.loads(p.read_text()) for p in sorted(run.dir.glob("incidents/*/incident.json"))]
    assert [i["action"] for i in found[:-1]] == ["none"] * (len(found) - 1), found
    root = run.hang()["findings"][0]
    assert found[-1]["action"] == "killed" and found[-1]["findings"][0] == root
    assert root["cause"] == "dataloader.worker_stuck", root
    assert (root["where"]["file"], root["where"]["line"]) == marker("dl_bad_sample.py", "HANG-HERE:stream")
    assert "of Stream, an IterableDataset (no sample indices)" in root["summary"], root["summary"]
    assert "/mnt/stream/part-0042" in root["summary"], root["summary"]


def test_a_healthy_job_is_untouched_and_leaves_no_batch_files_behind(run):
    """The twin with no bad sample, persistent workers over two epochs: exit 0, nothing done to it (at --min-stall 1
    a loaded machine's gap between steps may be said `slow`, never more), and each iterator's file gone with its
    workers."""
    r = run(*FAST, *py("dl_bad_sample.py", "--good", "--persistent", "--workers", "4"))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    only_slow_incidents(run)
    assert list((run.dir / "heartbeat").glob("*.dl")) == []


def test_torchs_own_ending_of_its_workers_is_a_bounded_wait_not_a_hang(run, start_job):
    """The loop stops while a worker is in a 20 s sample: torch's shutdown joins it for 5 s, then terminates it.
    Seen on an H100 at the exit of a healthy job (persistent, pinned-memory workers: 10 s of silence): with a
    short --min-stall it was `hung unknown` and, under --on-hang kill, killed. Now: slow, untouched, exit 0."""
    from conftest import inspect_json, root_cause

    job = start_job("dl_shutdown_wait.py")
    incident = inspect_json(job.pid, window=1)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"]) == ("slow", "dataloader.shutdown"), root
    assert root["proof"]["kind"] == "work" and "joined for up" in root["proof"]["fact"], root["proof"]
    assert (root["where"]["file"], root["where"]["line"]) == marker("dl_shutdown_wait.py", "SHUTDOWN-HERE")
    r = run(*FAST, "--on-hang", "kill", *py("dl_shutdown_wait.py"))
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert b"done" in r.stdout
