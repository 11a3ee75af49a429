"""`hangwatch attach PID`: a job already running, started without hangwatch, supervised from now on."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from conftest import SCENARIOS, _free_port, clean_env, marker, root_cause, run_hangwatch, torchrun

pytestmark = pytest.mark.e2e

ATTACH_TIMEOUT_S = 90.0


def _attach(*args: str, timeout: float = ATTACH_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return run_hangwatch("attach", *args, env=clean_env(), timeout=timeout)


def _events(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def _incidents(run_dir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(run_dir.glob("incidents/*/incident.json"))]


def test_a_dataloader_worker_that_hangs_after_the_attach_is_named_at_its_line_and_the_whole_tree_ended(
    start_job, tmp_path
):
    job = start_job([sys.executable, str(SCENARIOS / "dl_hang_later.py"), "120"])  # trains ~3 s, then one read hangs
    run_dir = tmp_path / "rd"
    r = _attach("--min-stall", "5", "--on-hang", "kill", "--kill-grace", "2", "--run-dir", str(run_dir), str(job.pid))
    assert r.returncode == 125, r.stderr  # a hang at a line of the job's code: do not requeue
    assert "attached to pid" in r.stderr and "its output followed in" in r.stderr, r.stderr
    (incident,) = _incidents(run_dir)
    root = root_cause(incident)
    assert incident["verdict"] == "hung" and root["cause"] == "dataloader.worker_stuck", root
    assert (root["where"]["file"], root["where"]["line"]) == marker("dl_hang_later.py"), root
    roles = {p["pid"]: p["role"] for p in incident["processes"]}
    assert roles[root["where"]["pid"]] == "dataloader_worker", roles
    steps = [e for e in _events(run_dir) if e["event"] == "progress"]
    assert steps, "the steps the job printed after the attach, read from the file its output goes to"
    job.proc.wait(timeout=10)  # the root, ended by hangwatch
    job.remember_tree()
    assert not [p for p in job.known if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
    log = (run_dir / "output.log").read_bytes()
    assert log and job.log.read_bytes().endswith(log), "output.log: the job's own bytes, the last of them"


def test_a_healthy_job_is_left_alone_and_the_watch_ends_with_it(start_job, tmp_path):
    job = start_job([sys.executable, str(SCENARIOS / "dl_hang_later.py")], env={"HW_SAMPLES": "240"})  # ~6 s
    run_dir = tmp_path / "rd"
    r = _attach("--min-stall", "2", "--on-hang", "kill", "--run-dir", str(run_dir), str(job.pid))
    assert r.returncode == 0, r.stderr
    assert job.proc.wait(timeout=10) == 0  # its own exit, untouched
    assert not _incidents(run_dir)
    assert "its exit status goes to its parent" in r.stderr, r.stderr
    assert (run_dir / "output.log").read_bytes().endswith(b"done\n")
    assert not [e for e in _events(run_dir) if e["event"] == "terminate"]


def test_a_signal_to_hangwatch_detaches_and_the_job_runs_on(start_job, tmp_path):
    job = start_job([sys.executable, str(SCENARIOS / "dl_hang_later.py")], env={"HW_SAMPLES": "100000"})
    run_dir = tmp_path / "rd"
    hw = subprocess.Popen(
        [sys.executable, "-m", "hangwatch", "attach", "--on-hang", "kill", "--run-dir", str(run_dir), str(job.pid)],
        stderr=subprocess.PIPE,
        env=clean_env(),
    )
    try:
        deadline = time.monotonic() + 30
        while not (run_dir / "events.jsonl").exists() or "launch" not in (run_dir / "events.jsonl").read_text():
            assert time.monotonic() < deadline and hw.poll() is None, "hangwatch attach never started watching"
            time.sleep(0.1)
        hw.send_signal(signal.SIGINT)
        _, err = hw.communicate(timeout=20)
    finally:
        if hw.poll() is None:
            hw.kill()
            hw.wait(timeout=10)
    assert hw.returncode == 0, err
    assert b"detached from pid" in err, err
    size = job.log.stat().st_size
    time.sleep(1.0)
    assert job.proc.poll() is None and job.log.stat().st_size > size, "the job goes on writing its steps"
    assert not [e for e in _events(run_dir) if e["event"] == "terminate"]


def test_what_cannot_be_attached_to_is_said_in_one_sentence_with_exit_2(tmp_path):
    sleeper = subprocess.Popen(["sleep", "30"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)
    # a process of a `hangwatch run` job: every one carries the run's directory in its environment
    supervised = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        env={**clean_env(), "HANGWATCH_RUN_DIR": str(tmp_path / "rd")},
    )
    try:
        cases = [
            ([str(gone.pid)], "no process has pid"),
            ([str(sleeper.pid)], "is not a Python process"),
            (["--on-hang", "restart", str(supervised.pid)], "needs a job hangwatch started"),
            ([str(supervised.pid)], "already runs under `hangwatch run`"),
            (["notapid"], "PID"),
        ]
        for args, said in cases:
            r = _attach(*args, timeout=30)
            assert r.returncode == 2, (args, r.stderr)
            assert said in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    finally:
        for p in (sleeper, supervised):
            p.kill()
            p.wait(timeout=10)


def test_a_torchrun_job_attached_by_its_launchers_pid_names_the_stuck_rank(start_job, tmp_path):
    job = start_job(torchrun(2, "dist_peer.py"), ready_count=2)  # rank 1 stuck loading its shard, rank 0 in all_reduce
    run_dir = tmp_path / "rd"
    r = _attach("--min-stall", "5", "--on-hang", "kill", "--kill-grace", "2", "--run-dir", str(run_dir), str(job.pid))
    assert r.returncode in (124, 125), r.stderr
    (incident,) = _incidents(run_dir)
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck" and root["where"]["rank"] == 1, root
    assert root["where"]["pid"] == job.ready_pids()["rank1"]
    assert (root["where"]["file"], root["where"]["line"]) == marker("dist_peer.py", "HANG-HERE:culprit"), root
    job.proc.wait(timeout=10)
    job.remember_tree()
    assert not [p for p in job.known if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]


@pytest.mark.slow
def test_a_job_whose_output_cannot_be_read_is_never_ended_by_a_clock_only_by_proof(start_job, tmp_path):
    """Its output goes to /dev/null: no progress can be read. --startup-grace and --max-slow pass while it works,
    and it is left alone; its twin, whose read hangs, is proven hung and ended."""
    fast = ["--min-stall", "3", "--startup-grace", "4", "--max-slow", "6", "--on-hang", "kill", "--kill-grace", "2"]
    healthy = start_job(
        [sys.executable, str(SCENARIOS / "dl_hang_later.py")], env={"HW_SAMPLES": "800"}, stdout_file=False
    )
    r = _attach(*fast, "--run-dir", str(tmp_path / "ok"), str(healthy.pid))
    assert r.returncode == 0, r.stderr
    assert "its output cannot be followed (stdout: /dev/null" in r.stderr, r.stderr
    assert healthy.proc.wait(timeout=10) == 0
    assert not _incidents(tmp_path / "ok")
    events = _events(tmp_path / "ok")
    looked = [e for e in events if e["event"] in ("extended", "probe")]
    # watched past both clocks (grace 4 s, then --max-slow 6 s; 800 samples: about 13 s, 560 ran 9.9 s once), looked
    # at, and left alone (under load a look takes seconds: how many fit is the machine's, not the tool's)
    ran = next(e["at"] for e in events if e["event"] == "job_exit") - events[0]["at"]
    assert looked and ran >= 4 + 6 and not [e for e in events if e["event"] == "terminate"], (ran, looked)

    hung = start_job([sys.executable, str(SCENARIOS / "dl_hang_later.py"), "60"], stdout_file=False)
    r = _attach(*fast, "--run-dir", str(tmp_path / "hung"), str(hung.pid))
    assert r.returncode in (124, 125), r.stderr
    (incident,) = _incidents(tmp_path / "hung")
    root = root_cause(incident)
    assert root["cause"] == "dataloader.worker_stuck" and root["proof"], root
    assert (root["where"]["file"], root["where"]["line"]) == marker("dl_hang_later.py"), root
    hung.proc.wait(timeout=10)


def _scrape(port: int) -> str:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def test_the_agent_attaches_to_each_job_as_it_appears_and_leaves_a_supervised_one_to_its_supervisor(
    start_job, tmp_path
):
    """The agent first; then a job that hangs, a healthy one and one under `hangwatch run`: one incident for the
    hang (its tree ended: this user is one it may act on), none for the others, a run directory for each job it
    watched, every job on one metrics endpoint while they run; a SIGTERM ends the agent."""
    script = tmp_path / "dl_hang_later.py"  # the jobs' command lines name this test's directory: --match finds them
    script.write_bytes((SCENARIOS / "dl_hang_later.py").read_bytes())
    runs, port = tmp_path / "runs", _free_port()
    me = psutil.Process().username()
    args = ["--runs-dir", str(runs), "--user", me, "--act-user", me, "--on-hang", "kill", "--min-stall", "3"]
    args += ["--scan-every", "0.5", "--metrics-port", str(port), "--match", re.escape(str(tmp_path))]
    agent = subprocess.Popen(
        [sys.executable, "-m", "hangwatch", "agent", *args],
        stderr=subprocess.PIPE,
        env=clean_env(),
    )
    try:
        hung = start_job([sys.executable, str(script), "200"])  # trains ~5 s, then one read hangs
        # ~20 s: it must still run when the agent has attached to both (a CI run at half speed saw it end first)
        healthy = start_job([sys.executable, str(script)], env={"HW_SAMPLES": "800"})
        own = ["--run-dir", str(tmp_path / "own"), "--", sys.executable, str(script)]
        supervised = start_job([sys.executable, "-m", "hangwatch", "run", *own], env={"HW_SAMPLES": "400"})
        own_run = f'command="dl_hang_later",host="{os.uname().nodename}",node="0",run="own"'
        wanted = {  # each seen in some scrape while the jobs run (all three on one endpoint)
            "the two it watches": 'hangwatch_agent_jobs{supervisor="agent"} 2.0',
            "the one under hangwatch run": 'hangwatch_agent_jobs{supervisor="run"} 1.0',
            "that one's figures, from its summary.json": f"hangwatch_info{{{own_run}}} 1.0",
        }
        deadline, seen = time.monotonic() + 45, ""
        while wanted:
            assert time.monotonic() < deadline and agent.poll() is None, (list(wanted), seen)
            time.sleep(0.5)
            with contextlib.suppress(OSError):
                seen = _scrape(port)
            wanted = {k: v for k, v in wanted.items() if v not in seen}
        assert healthy.proc.wait(timeout=60) == 0
        hung.proc.wait(timeout=60)  # ended by the agent's attach
        assert supervised.proc.wait(timeout=60) == 0
        dirs = sorted(runs.glob("*/*"))  # RUNS_DIR/USER/RUN
        assert len(dirs) == 2, dirs  # the supervised job is its supervisor's
        by_pid = {int(d.name.split("-")[2]): d for d in dirs}
        assert set(by_pid) == {hung.pid, healthy.pid}, by_pid
        (incident,) = _incidents(by_pid[hung.pid])
        assert root_cause(incident)["cause"] == "dataloader.worker_stuck"
        assert not _incidents(by_pid[healthy.pid])
        assert all(d.stat().st_mode & 0o077 == 0 and d.stat().st_uid == os.geteuid() for d in [*dirs, dirs[0].parent])
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            _, err = agent.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            agent.kill()
            _, err = agent.communicate(timeout=10)
    assert agent.returncode == 0, err
    assert err.count(b"attached to pid") == 2, err


OTHER_UID = 65534  # nobody
TRACED = "%file,process_vm_readv,ptrace"  # every way to read a process: its /proc files, its memory, a trace
LIBZ = Path("/usr/lib/x86_64-linux-gnu/libz.so.1")
OTHER_JOB = """
import ctypes, fcntl, os, sys, time
ctypes.CDLL(sys.argv[1])  # a library named libtorch: a training job, to the agent
fd = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)  # held while this user's job waits for it
print("up", flush=True)
time.sleep(3600)
"""
FLOCK_WAITER = """
import fcntl, sys
print("waiting for the lock", flush=True)
fcntl.flock(open(sys.argv[1]), fcntl.LOCK_EX)  # held by another user's process
"""


@contextlib.contextmanager
def _other_users_job(where: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process of another user that looks like a training job to the agent (Python, with a library named libtorch
    loaded: a copy of libz, the agent reads only the name in the memory map) and holds a flock on ``where/lock``."""
    os.chmod(where, 0o755)  # noqa: S103 - another user runs what is in it
    lib = where / "libtorch.so"
    lib.write_bytes(LIBZ.read_bytes())
    lib.chmod(0o755)
    (where / "lock").touch()
    os.chown(where / "lock", OTHER_UID, OTHER_UID)
    cmd = ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", "/usr/bin/python3"]
    cmd += ["-c", OTHER_JOB, str(lib), str(where / "lock")]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, start_new_session=True, cwd="/")
    try:
        assert p.stdout is not None and p.stdout.readline() == b"up\n"  # bounded: it prints at once, or exits
        yield p
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)


def _stop_traced_agent(traced: subprocess.Popen[bytes]) -> bytes:
    """SIGTERM to the agent under strace (strace ends with it); its stderr."""
    for child in psutil.Process(traced.pid).children():
        child.send_signal(signal.SIGTERM)
    try:
        return traced.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        for p in [*psutil.Process(traced.pid).children(recursive=True), psutil.Process(traced.pid)]:
            with contextlib.suppress(psutil.Error):
                p.kill()
        return traced.communicate(timeout=10)[1]


def _can_trace() -> bool:
    if os.geteuid() != 0 or not all(shutil.which(x) for x in ("strace", "setpriv")) or not LIBZ.exists():
        return False
    if not Path("/usr/bin/python3").exists():
        return False
    r = subprocess.run(
        ["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=%file", "-o", "/dev/null", "true"], check=False
    )
    return r.returncode == 0  # strace with seccomp filters, and ptrace allowed here


@pytest.mark.skipif(not _can_trace(), reason="needs root, strace (ptrace allowed), setpriv and a system Python")
def test_the_agent_and_its_watches_never_read_a_process_of_a_user_they_were_not_told_to_watch(start_job, tmp_path):
    """Every file, memory read and trace of the agent and of the watches it starts, recorded by strace, while it
    watches two jobs of this user: one whose DataLoader worker hangs (a tree walk, looks, scans of the machine's fds,
    the end) and one waiting for a flock that a training job of another user holds. Of that job, only the owner of
    its /proc directory and its /proc/PID/stat (the tree walk's) are looked at: it is named as the lock's holder,
    never read, and the wait is not proven."""
    other_dir = Path(tempfile.mkdtemp(prefix="hangwatch-other-"))
    # this user's, in no job: walked (not `sleep 3600`, which test_guardian looks for as a py-spy left frozen)
    unrelated = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True)
    try:
        with _other_users_job(other_dir) as other:
            pattern = re.compile(re.escape(str(tmp_path)) + "|" + re.escape(str(other_dir)))
            from hangwatch.supervise import agent as agent_mod

            found = agent_mod.find_jobs(None, set(), pattern)  # told to watch every user: it is a job
            assert other.pid in {j.pid for j in found}, found
            script = tmp_path / "dl_hang_later.py"
            script.write_bytes((SCENARIOS / "dl_hang_later.py").read_bytes())
            waiter = tmp_path / "flock_waiter.py"
            waiter.write_text("import torch\n" + FLOCK_WAITER)
            trace, runs = tmp_path / "strace.txt", tmp_path / "runs"
            me = psutil.Process().username()
            args = ["--runs-dir", str(runs), "--user", me, "--act-user", me, "--on-hang", "kill", "--min-stall", "3"]
            args += ["--scan-every", "0.5", "--match", pattern.pattern]
            strace = ["strace", "-f", "-qq", "--seccomp-bpf", "-e", f"trace={TRACED}", "-o", str(trace)]
            agent = subprocess.Popen(
                [*strace, sys.executable, "-m", "hangwatch", "agent", *args], stderr=subprocess.PIPE, env=clean_env()
            )
            try:
                blocked = start_job([sys.executable, str(waiter), str(other_dir / "lock")], ready_count=0)
                hung = start_job([sys.executable, str(script), "200"])  # trains ~5 s, then one read hangs
                hung.proc.wait(timeout=90)  # proven and ended by the watch the agent started
                assert blocked.proc.poll() is None  # the lock's holder is not read: nothing proven, nothing ended
            finally:
                err = _stop_traced_agent(agent)
            assert err.count(b"attached to pid") == 2, err  # this user's jobs only
            by_pid = {int(d.name.split("-")[2]): d for d in runs.glob("*/*")}
            (incident,) = _incidents(by_pid[hung.pid])
            assert root_cause(incident)["cause"] == "dataloader.worker_stuck"
            looked = [e for e in _events(by_pid[blocked.pid]) if e["event"] in ("extended", "probe")]
            assert looked and not _incidents(by_pid[blocked.pid]), looked  # looked at, never declared
            lines = trace.read_text(errors="replace").splitlines()
            assert [ln for ln in lines if f'"/proc/{unrelated.pid}/stat"' in ln], "the machine's processes were walked"
            assert [ln for ln in lines if '"/proc/locks"' in ln], "the lock's holder was looked for"
            pid = other.pid
            touched = [  # (its /proc/PID/stat, which `ps` shows every user, is read by each watch's tree walk)
                ln
                for ln in lines
                if (f"/proc/{pid}/" in ln and f'"/proc/{pid}/stat"' not in ln)
                or re.search(rf"process_vm_readv\({pid}\b|ptrace\(\w+, {pid}\b", ln)
            ]
            assert not touched, touched[:5]
            assert [ln for ln in lines if f'"/proc/{pid}"' in ln], "its owner was looked at"
    finally:
        unrelated.kill()
        unrelated.wait(timeout=10)
        shutil.rmtree(other_dir, ignore_errors=True)
