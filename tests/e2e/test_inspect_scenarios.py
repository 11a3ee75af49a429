"""End to end: real jobs hung the way users' jobs hang; `hangwatch inspect --json` names cause and line."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from conftest import SCENARIOS, _free_port, inspect_json, marker, root_cause, torchrun

pytestmark = pytest.mark.e2e

torch = pytest.importorskip("torch")


def role_of(incident: dict, pid: int) -> str:
    return next(p["role"] for p in incident["processes"] if p["pid"] == pid)


def assert_where(finding: dict, script: str, tag: str = "HANG-HERE") -> None:
    path, line = marker(script, tag)
    w = finding["where"]
    assert (w["file"], w["line"]) == (path, line), finding


@pytest.mark.parametrize("script", ["dl_worker_blocked.py", "dl_worker_spin.py", "dl_iterable.py", "dl_collate.py"])
def test_dataloader_worker_stuck(start_job, script):
    job = start_job(script)
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "dataloader.worker_stuck", root
    assert incident["verdict"] == "hung"
    assert_where(root, script)
    assert role_of(incident, root["where"]["pid"]) == "dataloader_worker"
    assert root["where"]["pid"] == job.ready_pids()["ready"]
    # a job not started by `hangwatch run` keeps no record: the batch comes from the worker's own loop's locals
    worker = next(p for p in incident["processes"] if p["pid"] == root["where"]["pid"])
    assert (worker["holds"] or "").startswith("holds batch "), worker


def test_spinning_worker_is_reported_as_spinning(start_job):
    job = start_job("dl_worker_spin.py")
    root = root_cause(inspect_json(job.pid))
    assert "spinning" in root["summary"]
    assert any("% CPU" in e for e in root["evidence"])


def test_worker_pid_finds_its_main(start_job):
    job = start_job("dl_worker_blocked.py")
    worker = job.ready_pids()["ready"]
    incident = inspect_json(worker)
    assert role_of(incident, job.pid) == "main"
    root = root_cause(incident)
    assert root["cause"] == "dataloader.worker_stuck"
    assert root["where"]["pid"] == worker


def _venv_named_hangwatch(root: Path) -> Path:
    """A real virtual environment at a path containing `hangwatch` (as `python -m venv ~/venvs/hangwatch`
    makes), that sees this environment's packages: its interpreter's path names the tool, the job is not it."""
    venv = root / "hangwatch-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    here = sysconfig.get_paths()["purelib"]
    there = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.strip()
    Path(there, "outer.pth").write_text(f"import site; site.addsitedir({here!r})\n")
    return venv / "bin" / "python"


def test_worker_pid_finds_its_main_from_a_path_named_hangwatch(start_job, tmp_path):
    """An install and a project whose paths contain the tool's name: the job's main is still the job's."""
    python = _venv_named_hangwatch(tmp_path)
    project = tmp_path / "hangwatch-project"
    project.mkdir()
    for name in ("dl_worker_blocked.py", "_ready.py"):
        shutil.copy(SCENARIOS / name, project / name)
    job = start_job([str(python), str(project / "dl_worker_blocked.py")])
    worker = job.ready_pids()["ready"]
    incident = inspect_json(worker)
    assert role_of(incident, job.pid) == "main"
    root = root_cause(incident)
    assert root["cause"] == "dataloader.worker_stuck", root
    assert root["where"]["pid"] == worker
    assert root["where"]["file"].endswith("hangwatch-project/dl_worker_blocked.py")


def test_batch_lost(start_job):
    job = start_job("dl_batch_lost.py")
    root = root_cause(inspect_json(job.pid))
    assert root["cause"] == "dataloader.batch_lost", root
    assert_where(root, "dl_batch_lost.py")
    assert root["where"]["pid"] == job.pid
    assert any("feeder" in e for e in root["evidence"]), root["evidence"]


def test_fork_inherited_lock(start_job):
    job = start_job("fork_lock.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "fork.inherited_lock", root
    assert_where(root, "fork_lock.py")
    assert role_of(incident, root["where"]["pid"]) == "dataloader_worker"
    assert any("metrics-uploader" in e for e in root["evidence"])
    assert any("spawn" in f for f in root["fix"])


def test_busy_loop(start_job):
    job = start_job("busy_loop.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "code.busy_loop", root
    assert incident["verdict"] == "hung"
    assert_where(root, "busy_loop.py")


def test_deadlock(start_job):
    job = start_job("deadlock.py")
    root = root_cause(inspect_json(job.pid))
    assert root["cause"] == "code.deadlock", root
    lines = {marker("deadlock.py", t)[1] for t in ("HANG-HERE:saver", "HANG-HERE:logger")}
    assert root["where"]["line"] in lines
    assert root["where"]["file"] == marker("deadlock.py", "HANG-HERE:saver")[0]
    assert sum("waits on a lock" in e for e in root["evidence"]) >= 2


def test_network_wait(start_job):
    job = start_job("network_wait.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "io.network_wait", root
    assert incident["verdict"] == "hung"
    assert_where(root, "network_wait.py")


def test_stopped_process_is_reported_and_left_stopped(start_job):
    job = start_job("sleeper.py")
    os.kill(job.pid, signal.SIGSTOP)
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "process.stopped"
    assert incident["verdict"] == "stopped"
    assert_where(root, "sleeper.py")
    assert any(f"kill -CONT {job.pid}" in f for f in root["fix"])
    with open(f"/proc/{job.pid}/stat") as f:
        assert f.read().rsplit(")", 1)[1].split()[0] == "T"  # we did not continue it


def test_unknown_still_points_at_the_line(start_job):
    job = start_job("sleeper.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "unknown"
    assert incident["verdict"] == "hung"
    assert_where(root, "sleeper.py")
    with open(f"/proc/{job.pid}/stat") as f:
        assert f.read().rsplit(")", 1)[1].split()[0] == "S"  # capture never leaves a target stopped


def test_child_wait_subprocess(start_job):
    job = start_job("child_wait.py")
    root = root_cause(inspect_json(job.pid))
    assert root["cause"] == "child.wait", root
    child_script = job.tmp / "preprocess.py"
    assert root["where"]["file"] == str(child_script)
    assert root["where"]["line"] == marker(child_script, "HANG-HERE:child")[1]
    assert root["where"]["pid"] == job.ready_pids()["ready"]


def test_child_wait_queue_join_before_get(start_job):
    job = start_job("mp_queue_join.py")
    root = root_cause(inspect_json(job.pid))
    assert root["cause"] == "child.wait", root
    assert_where(root, "mp_queue_join.py")
    assert any("join before get" in e for e in root["evidence"]), root["evidence"]


def test_output_buffered(start_job):
    job = start_job("output_buffered.py")
    incident = inspect_json(job.pid, window=2.5)
    root = root_cause(incident)
    assert root["cause"] == "output.buffered", root
    assert incident["verdict"] == "progressing"
    assert root["where"]["file"] == str(SCENARIOS / "output_buffered.py")


def test_same_job_unbuffered_is_not_flagged(start_job):
    job = start_job("output_buffered.py", env={"PYTHONUNBUFFERED": "1"})
    incident = inspect_json(job.pid, window=2.5)
    assert incident["findings"][0]["cause"] != "output.buffered"
    assert incident["verdict"] == "progressing"


def test_compile_in_progress_is_not_hung(start_job):
    job = start_job("compile_job.py")
    incident = inspect_json(job.pid, window=3.0)
    root = root_cause(incident)
    assert root["cause"] == "compile.in_progress", root
    assert incident["verdict"] == "slow"
    assert_where(root, "compile_job.py")


def test_distributed_peer_stuck_names_culprit_rank(start_job):
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        str(_free_port()),
        str(SCENARIOS / "dist_peer.py"),
    ]
    job = start_job(argv, ready_count=2)
    incident = inspect_json(job.pid, window=2.0)
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck", root
    assert root["where"]["rank"] == 1
    assert root["where"]["pid"] == job.ready_pids()["rank1"]
    assert_where(root, "dist_peer.py", "HANG-HERE:culprit")
    roles = {p["role"] for p in incident["processes"]}
    assert {"launcher", "rank"} <= roles
    # The same answer from a victim rank's PID.
    rc0 = root_cause(inspect_json(job.ready_pids()["rank0"], window=1.0))
    assert (rc0["cause"], rc0["where"]["rank"]) == ("distributed.peer_stuck", 1)


def test_rendezvous_wait(start_job):
    env = {
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "2",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(_free_port()),
    }
    job = start_job("dist_rendezvous.py", env=env)
    incident = inspect_json(job.pid)
    assert incident["verdict"] == "waiting", incident["verdict"]  # alive: other nodes may be late
    root = root_cause(incident)
    assert root["cause"] == "distributed.rendezvous_wait", root
    assert_where(root, "dist_rendezvous.py")
    assert any("WORLD_SIZE=2" in e for e in root["evidence"])
    # The store, how many joined of how many, and torch's own timeout.
    assert f"1 of 2 joined the store at 127.0.0.1:{env['MASTER_PORT']}" in root["summary"], root["summary"]
    assert any("torch itself gives up after 30 min (gloo" in e for e in root["evidence"]), root["evidence"]


def test_network_wait_in_a_prefetch_thread(start_job):
    job = start_job("thread_prefetch.py")
    root = root_cause(inspect_json(job.pid))
    assert root["cause"] == "io.network_wait", root
    assert_where(root, "thread_prefetch.py")
    assert root["where"]["tid"] != job.pid
    assert any("prefetcher" in e for e in root["evidence"])


def test_child_wait_os_system(start_job):
    job = start_job("os_system.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "child.wait", root
    assert_where(root, "os_system.py")  # the child is not Python: the parent's line that waits
    assert any("sleep 600" in e for e in root["evidence"])


def test_distributed_ranks_started_by_mp_spawn(start_job):
    job = start_job("dist_spawn.py", ready_count=2, env={"HW_PORT": str(_free_port())})
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck", root
    assert root["where"]["rank"] == 1 and root["where"]["pid"] == job.ready_pids()["rank1"]
    assert_where(root, "dist_spawn.py")
    ranks = sorted((p["rank"], p["pid"]) for p in incident["processes"] if p["role"] == "rank")
    assert [r for r, _ in ranks] == [0, 1]


def test_an_mp_spawn_rank_is_numbered_by_its_index_not_by_the_order_of_those_alive(start_job):
    """mp.spawn's ranks have no RANK in their environment: the index is ``_wrap``'s argument ``i``, read from its
    locals. Numbered by start order among the living, the last rank left after rank 0 returned was called rank 0
    (a claim no fact backed); now rank 1, and no world size is claimed (the count of those that exited is unknown)."""
    job = start_job("spawn_last_rank.py")
    incident = inspect_json(job.pid)
    ranks = [p for p in incident["processes"] if p["role"] == "rank"]
    assert [(p["rank"], p["pid"]) for p in ranks] == [(1, job.ready_pids()["rank1"])], ranks
    root = root_cause(incident)
    assert root["where"]["rank"] == 1 and root["proof"] is not None, root
    assert_where(root, "spawn_last_rank.py")


def test_a_rank_asleep_for_hours_is_a_proven_hang_under_inspect_too_and_a_short_nap_is_a_straggler(start_job):
    """`inspect` reads no recorder: a rank asleep on a 10-hour timer (the kernel's) while the other waits in
    all_reduce sleeps past both of torch's default process-group timeouts and the job's --max-slow: whatever timeout
    the job set, the outcome is known now, as `run` knows it from the recorder. The twin naps 20 s: a straggler."""
    job = start_job(torchrun(2, "dist_nap.py", "36000"), ready_count=2)
    root = root_cause(inspect_json(job.pid))
    assert root["cause"] == "distributed.peer_stuck" and root["where"]["rank"] == 1, root
    assert root["proof"] and root["proof"]["kind"] == "hang", root
    assert_where(root, "dist_nap.py", "HANG-HERE:nap")
    s = root["summary"]
    assert "working" not in s and "stuck" not in s and "asleep" in s and "on a timer that ends in 10.0 h" in s, s
    assert "torch's default process-group timeout is 10 min (NCCL) or 30 min (gloo)" in s, s
    assert "and after --max-slow (30 min) too" in s, s


def test_a_rank_napping_20_s_under_inspect_is_a_straggler(start_job):
    job = start_job(torchrun(2, "dist_nap.py", "20"), ready_count=2)
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert incident["verdict"] != "hung" and root["cause"] == "distributed.straggler", root
    assert root["where"]["rank"] == 1 and not (root["proof"] and root["proof"]["kind"] == "hang"), root
    assert root["fix"][0].startswith("One rank sleeps or polls while the others wait"), root["fix"]


def test_ranks_in_different_collectives_name_the_odd_one(start_job):
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "3",
        "--master-port",
        str(_free_port()),
        str(SCENARIOS / "dist_diverged.py"),
    ]
    job = start_job(argv, ready_count=3)
    incident = inspect_json(job.pid, window=1.5)
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck", root
    assert root["where"]["rank"] == 2
    assert_where(root, "dist_diverged.py", "HANG-HERE:odd")
    assert "barrier" in root["summary"]
    # the namer only names; the graph proves it: each rank waits for the ranks not in its own call, a cycle
    assert incident["verdict"] == "hung" and root["proof"]["kind"] == "hang", root
    assert "a cycle" in root["proof"]["fact"] and "which is not in it" in root["proof"]["fact"], root["proof"]


def test_a_barrier_skipped_right_before_the_hang_under_inspect_names_the_odd_rank_and_says_what_it_cannot_see(
    start_job,
):
    """Without the recorder the stacks show where the ranks wait (ranks 0-1 in their second barrier, rank 2 in the
    next all_reduce), not the barrier rank 2 skipped: the odd rank is named, and the finding says the call where
    they went different ways may be earlier (`run` names it, from the recorder: tests/e2e/test_flight.py)."""
    job = start_job(torchrun(3, "dist_skew.py", "skipnext"), ready_count=3)
    root = root_cause(inspect_json(job.pid, window=1.5))
    assert root["cause"] == "distributed.peer_stuck" and root["where"]["rank"] == 2, root
    assert_where(root, "dist_skew.py", "HANG-HERE:reduce")
    assert any("without torch's flight recorder" in e for e in root["evidence"]), root["evidence"]


def test_a_pool_whose_result_handler_exited_is_proven_lost_work(start_job):
    """Pool(maxtasksperchild=1) returning tensors: the result handler thread is gone, Pool.map waits for
    ever; named at the map's line, proven (its twin returns arrays and is alive)."""
    job = start_job("pool_tensor.py")
    time.sleep(2)  # the first results are sent, and the handler exits on the first it cannot read
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"], (root["proof"] or {}).get("kind")) == (
        "hung",
        "child.lost_work",
        "hang",
    ), root
    assert_where(root, "pool_tensor.py")
    assert "result-handler thread" in root["proof"]["fact"]


def test_the_same_pool_returning_arrays_is_alive(start_job):
    job = start_job("pool_tensor.py", env={"HW_RETURN": "numpy"})
    time.sleep(2)
    incident = inspect_json(job.pid)
    assert incident["verdict"] != "hung", incident["findings"][:2]
    assert all(f["cause"] != "child.lost_work" for f in incident["findings"]), incident["findings"][:2]


@pytest.mark.parametrize("mode", ["threadpool", "spawn"])
def test_an_earlier_runs_refusal_in_an_appended_log_proves_nothing(tmp_path, mode):
    """`nohup python train.py >> log`: the log still holds the traceback of an earlier run whose spawn workers died
    importing the script (Python's refusal to start a process from its top level). This run's pool, a ThreadPool (no
    worker process at all) or a guarded spawn Pool whose workers are in their tasks, works: no worker of it dies during
    the look, so `inspect` must not call it hung (a death in the log is proof only while deaths go on)."""
    from conftest import Job, clean_env, kill_tree

    script = SCENARIOS / "spawn_pool_reruns_main.py"
    stale = (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        '  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 122, in spawn_main\n'
        '  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 131, in _main\n'
        '  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 246, in prepare\n'
        '  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 297, in _fixup_main_from_path\n'
        "    main_content = runpy.run_path(main_path,\n"
        f'  File "{script}", line 60, in <module>\n'
        "    search()  # no __main__ guard: each worker reaches this line again\n"
        '  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 140, in _check_not_importing_main\n'
        "RuntimeError: \n"
        "        An attempt has been made to start a new process before the\n"
        "        current process has finished its bootstrapping phase.\n"
    )
    log, ready = tmp_path / "nohup.out", tmp_path / "ready"
    log.write_text(stale * 3)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, str(script), mode],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=clean_env(HW_READY=str(ready)),
            start_new_session=True,
            cwd=tmp_path,
        )
    job = Job(proc, ready, log, tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert ready.exists(), log.read_text()[-2000:]
        time.sleep(1.0)
        incident = inspect_json(proc.pid)
        assert incident["verdict"] != "hung", root_cause(incident)
        assert "dies as it starts" not in root_cause(incident)["summary"]
    finally:
        kill_tree(job)
