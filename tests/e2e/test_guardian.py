"""No job left behind: when hangwatch itself is SIGKILLed, the guardian ends the job's whole tree
within --kill-grace plus a few seconds, stopped and SIGTERM-deaf jobs and torchrun ranks included."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import SCENARIOS, Run, _free_port, _job_processes, wait_for_event

pytestmark = pytest.mark.e2e

pytest.importorskip("torch")
GRACE_S = 2.0
SLACK_S = 6.0


def _wait_ready(run: Run, count: int, timeout: float = 90.0) -> None:
    ready = run.tmp / "ready"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready.exists() and len(ready.read_text().splitlines()) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the job never said ready {count} times")


def _guardians(supervisor: int) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info["cmdline"] or []
        if any(a.endswith("_guard.py") for a in cmd) and str(supervisor) in cmd:
            out.append(p)
    return out


def _kill_hangwatch_and_wait(run: Run) -> float:
    assert run.proc is not None
    supervisor = run.proc.pid
    assert _guardians(supervisor), "no guardian beside the job"
    jobs = _job_processes(run.dir)
    assert jobs
    t0 = time.monotonic()
    run.proc.kill()  # SIGKILL: hangwatch gets no chance to clean up
    run.proc.wait(timeout=10)
    deadline = t0 + GRACE_S + SLACK_S
    while time.monotonic() < deadline:
        if not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in jobs + _guardians(supervisor)):
            return time.monotonic() - t0
        time.sleep(0.1)
    left = [p.pid for p in jobs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    raise AssertionError(
        f"left behind {GRACE_S + SLACK_S:.0f} s after hangwatch died: {left}, "
        f"guardians {[g.pid for g in _guardians(supervisor)]}"
    )


def _start(run: Run, *cmd: str) -> None:
    run.start(
        "--kill-grace",
        str(GRACE_S),
        "--min-stall",
        "600",
        "--startup-grace",
        "600",
        "--",
        *cmd,
        env={"HW_READY": str(run.tmp / "ready")},
    )
    wait_for_event(run, "launch")


def test_a_job_that_ignores_sigterm_with_hung_workers_is_ended(run):
    _start(run, sys.executable, str(SCENARIOS / "stubborn_workers.py"))
    _wait_ready(run, 2)
    took = _kill_hangwatch_and_wait(run)
    assert took >= GRACE_S * 0.8  # SIGTERM was ignored: it took the grace, then SIGKILL


def test_a_stopped_job_is_ended(run):
    _start(run, sys.executable, str(SCENARIOS / "sleeper.py"))
    job = wait_for_event(run, "launch")["pid"]
    os.kill(job, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while psutil.Process(job).status() != psutil.STATUS_STOPPED and time.monotonic() < deadline:
        time.sleep(0.05)
    took = _kill_hangwatch_and_wait(run)
    assert took < GRACE_S + SLACK_S  # SIGCONT let it act on SIGTERM


def test_torchrun_ranks_are_ended(run):
    _start(
        run,
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        str(_free_port()),
        str(SCENARIOS / "dist_sleep.py"),
    )
    _wait_ready(run, 2)
    _kill_hangwatch_and_wait(run)


def test_the_guardian_goes_away_with_a_job_that_ends(run):
    r = run("--", sys.executable, "-c", "print('done')")
    assert r.returncode == 0 and run.proc is not None
    assert not _guardians(run.proc.pid)  # hangwatch ended it before exiting


# --- a supervisor that is itself watched ---------------------------------------------------------------
def test_a_capture_that_never_returns_is_bounded_and_supervision_goes_on(run, tmp_path):
    fake = tmp_path / "py-spy"
    fake.write_text("#!/bin/sh\nexec sleep 3600\n")  # a py-spy frozen on its target, forever
    fake.chmod(0o755)
    r = run(
        "--min-stall",
        "1",
        "--startup-grace",
        "3",
        "--capture-window",
        "1",
        "--kill-grace",
        "2",
        "--on-hang",
        "kill",
        "--",
        sys.executable,
        str(SCENARIOS / "deadlock.py"),
        env={"HANGWATCH_PY_SPY": str(fake), "HANGWATCH_STACK_TIMEOUT_S": "1", "HANGWATCH_WATCHDOG_S": "1"},
    )
    assert r.returncode == 124, r.stderr.decode()[-2000:]
    watchdog = [e for e in run.events() if e["event"] == "watchdog"]
    assert watchdog and watchdog[0]["doing"].startswith("capturing pid"), run.events()
    assert run.incident()["action"] == "killed"  # supervision went on to the end
    assert any("py-spy did not answer" in n for n in run.incident()["notes"])
    frozen = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "3600"]]
    assert not frozen, "a frozen py-spy was left behind"


def test_hangwatch_ends_a_stopped_job_with_sigterm_and_sigcont_not_sigkill(run):
    p = run.start(
        "--min-stall",
        "1",
        "--startup-grace",
        "2",
        "--capture-window",
        "1",
        "--kill-grace",
        "20",
        "--on-hang",
        "kill",
        "--",
        sys.executable,
        str(SCENARIOS / "sleeper.py"),
    )
    job = wait_for_event(run, "launch")["pid"]
    os.kill(job, signal.SIGSTOP)
    p.wait(timeout=60)
    action = next(e for e in run.events() if e["event"] == "action")
    assert action["terminated"] == [job] and action["killed"] == [], action  # SIGTERM worked: it was continued
    assert action["seconds"] < 10


def test_a_reused_root_pid_is_not_taken_for_the_job(tmp_path):
    """Once the job's root is reaped, its pid may be handed to another process: that process's tree
    must never be scanned into the job (and so never ended with it)."""
    from hangwatch.recover.terminate import JobTracker

    stranger = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; "
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "time.sleep(60)",
        ],
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not psutil.Process(stranger.pid).children():
            time.sleep(0.05)
        tracker = JobTracker(stranger.pid)
        tracker.seen[stranger.pid] = 1.0  # the job's root as it was: same pid, started long ago, reaped since
        tracker.scan()
        assert list(tracker.seen) == [stranger.pid]  # the stranger's child was not taken in
        fresh = JobTracker(stranger.pid)
        fresh.scan()
        assert len(fresh.seen) == 2  # the same tree is the job's when the root is the one we started
    finally:
        os.killpg(stranger.pid, signal.SIGKILL)
        stranger.wait(timeout=10)


def test_the_exec_shim_arms_the_death_signal_without_ctypes():
    """The shim arms PR_SET_PDEATHSIG through _ctypes (importing ctypes would double every job's start):
    a process armed by it dies when its parent does. The guardian is not involved here."""
    import hangwatch

    shim_dir = os.path.dirname(hangwatch.__file__)
    code = (
        f"import os, sys, time; sys.path.insert(0, {shim_dir!r}); import _exec\n"
        "if os.fork() == 0:\n"
        "    _exec._arm_death_signal(); print(os.getpid(), flush=True); time.sleep(30); os._exit(0)\n"
        "time.sleep(0.3)\n"
    )
    parent = subprocess.Popen([sys.executable, "-S", "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.wait(timeout=10)
    deadline = time.monotonic() + 5
    try:
        while time.monotonic() < deadline:
            try:
                if psutil.Process(child).status() == psutil.STATUS_ZOMBIE:
                    break  # dead, waiting for init to reap it
            except psutil.NoSuchProcess:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the armed child outlived its parent")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    assert "ctypes" not in subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            f"import sys; sys.path.insert(0, {shim_dir!r});"
            " import _exec; _exec._arm_death_signal(); print(sorted(sys.modules))",
        ],
        capture_output=True,
        text=True,
        timeout=10,
    ).stdout.replace("_ctypes", "")
