"""A process is stuck only if it did not move. Each case here is the healthy twin of a stuck one in
test_inspect_scenarios.py: the same line in every stack sample, but the job moves (it wakes, reads
bytes, or its loop variables advance), so it must not be called hung.

Here the tests that start real processes; those that start none are in tests/unit/test_movement.py.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import SCENARIOS, inspect_json, marker, root_cause, run_hangwatch

pytest.importorskip("torch")


def _not_hung(incident: dict) -> dict:
    assert incident["verdict"] in ("slow", "progressing"), (incident["verdict"], incident["findings"][:2])
    root = root_cause(incident)
    return root


@pytest.mark.e2e
def test_a_worker_sleeping_in_getitem_is_slow_not_stuck(start_job):
    job = start_job("dl_worker_sleepy.py")
    incident = inspect_json(job.pid)
    root = _not_hung(incident)
    assert root["cause"] == "dataloader.worker_slow" and "alive" in root["summary"], root
    assert any("woke" in e for e in root["evidence"]), root["evidence"]


@pytest.mark.e2e
def test_a_cpu_loop_that_advances_into_a_buffered_file_is_output_buffered(start_job):
    job = start_job("buffered_cpu_loop.py")  # stdout is a file; no -u, no PYTHONUNBUFFERED
    incident = inspect_json(job.pid)
    root = _not_hung(incident)
    assert root["cause"] == "output.buffered", root
    assert any(e.startswith("its loop advances:") and "->" in e for e in root["evidence"]), root["evidence"]
    assert root["where"]["file"] == str(SCENARIOS / "buffered_cpu_loop.py")


@pytest.mark.e2e
def test_a_spin_whose_condition_never_changes_is_a_busy_loop_with_its_locals_quoted(start_job):
    job = start_job("busy_loop.py")
    root = root_cause(inspect_json(job.pid))
    assert root["cause"] == "code.busy_loop", root
    assert any("`state` stayed {}" in e for e in root["evidence"]), root["evidence"]


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["forever", "looped"])
def test_one_long_call_holding_the_gil_is_computing_not_a_busy_loop(start_job, how):
    """The same line in every sample, and that line a call (here sum over a huge range, which runs in C
    like a big sort or a regex): alive, never `code.busy_loop`, which would get it killed. Inside a loop whose locals
    are read (``looped``), they stay while the call runs: said so, never "its loop advances" (it was)."""
    job = start_job([sys.executable, str(SCENARIOS / "long_call.py"), how])
    incident = inspect_json(job.pid, window=2)
    root = root_cause(incident)
    assert (root["cause"], incident["verdict"]) == ("code.computing", "slow"), root
    assert "inside one call" in root["summary"] and "sum(range(n))" in root["evidence"][0], root
    assert not any("advances" in e for e in (root["summary"], *root["evidence"])), root
    if how == "looped":
        assert any("`i` stayed 0" in e for e in root["evidence"]), root["evidence"]


@pytest.mark.e2e
def test_a_retry_loop_with_backoff_is_not_hung(start_job):
    job = start_job("retry_backoff.py")
    incident = inspect_json(job.pid, window=2.5)
    root = _not_hung(incident)
    assert root["cause"] not in ("code.deadlock", "code.busy_loop"), root


@pytest.mark.e2e
def test_a_slow_network_read_that_delivers_bytes_is_not_hung(start_job):
    job = start_job("slow_network_read.py")
    incident = inspect_json(job.pid)
    root = _not_hung(incident)
    if root["cause"] == "io.network_wait":
        assert ", alive (" in root["summary"], root  # the state of its thread, said


@pytest.mark.e2e
def test_a_worker_blocked_on_a_tcp_read_names_the_peer_and_the_timeout_fix(start_job):
    job = start_job("dl_worker_socket.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert incident["verdict"] == "hung" and root["cause"] == "dataloader.worker_stuck", root
    assert "TCP read from 127.0.0.1:" in root["summary"] and "no timeout" in root["summary"], root["summary"]
    assert "timeout" in root["fix"][0], root["fix"]
    assert root["where"]["function"].endswith("__getitem__")


# --- native frames -------------------------------------------------------------------------------------
@pytest.mark.e2e
def test_openmp_after_fork_is_named_from_native_frames(start_job):
    # A real native hang on CPU: GNU OpenMP's pool does not survive fork. Python's stack shows only
    # the user's matmul line; the automatic native pass names libgomp.
    job = start_job("omp_after_fork.py", env={"OMP_NUM_THREADS": "2"})
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert incident["verdict"] == "hung" and root["cause"] == "fork.inherited_lock", root
    assert "OpenMP (libgomp)" in root["summary"], root["summary"]
    assert any("libgomp" in e for e in root["evidence"]), root["evidence"]
    assert root["fix"][0].startswith("Set OMP_NUM_THREADS=1")
    assert (root["where"]["file"], root["where"]["line"]) == marker("omp_after_fork.py")


@pytest.mark.e2e
def test_native_flag_reads_native_frames_of_every_python_process(start_job, tmp_path):
    job = start_job("deadlock.py")
    out = tmp_path / "ev.json"
    r = run_hangwatch("inspect", str(job.pid), "--window", "1", "--native", "--json", "--evidence", str(out))
    assert r.returncode == 0, r.stderr
    native = [n for p in json.loads(out.read_text())["processes"] for n in p["native"]]
    assert native and any(f["native"] for n in native for f in n["frames"])


@pytest.mark.e2e
def test_a_worker_blocked_reading_a_file_names_the_file_and_its_filesystem(start_job, tmp_path):
    job = start_job("dl_worker_fifo.py")
    root = root_cause(inspect_json(job.pid))
    assert root["cause"] == "dataloader.worker_stuck", root
    assert f"waits on a read of {tmp_path / 'shard-00017.bin'} (" in root["summary"], root["summary"]
    assert any(e.startswith("blocked in read() on ") for e in root["evidence"]), root["evidence"]


# --- a loop that moves and goes nowhere ---------------------------------------------------------------------
@pytest.mark.e2e
def test_a_loop_whose_condition_nothing_can_change_is_proven_hung(start_job):
    """A batch grown past the end of its list: the index walks on (a local that moves, as in a loop that
    works), but the condition reads only `batch` and `target`, which stayed, and the body calls nothing:
    proof at the first look, at the loop's line."""
    job = start_job("frozen_loop.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"], (root["proof"] or {}).get("kind")) == (
        "hung",
        "code.busy_loop",
        "hang",
    ), root
    assert (root["where"]["file"], root["where"]["line"]) == marker("frozen_loop.py", "HANG-HERE")  # its header
    fact = root["proof"]["fact"]
    assert fact.startswith("a loop that cannot end") and "`batch` stayed [0, 1, 2" in fact, fact


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["flag", "fills"])
def test_a_spin_another_thread_will_end_is_never_proven(start_job, mode):
    """The twins: the same spins, but a thread of the process sets the flag (the counter only counts) or fills
    the list later. Before, the counting spin was proven hung and killed at the first look."""
    job = start_job("frozen_loop.py", env={"HW_LOOP": mode, "HW_LOOP_S": "60"})
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "code.busy_loop" and root["proof"] is None, root
    path, line = marker("frozen_loop.py", f"HANG-HERE:{mode}")
    assert root["where"]["file"] == path and root["where"]["line"] in (line, line + 1), root  # the loop's two lines
