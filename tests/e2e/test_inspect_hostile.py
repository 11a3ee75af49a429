"""Bad input and hostile conditions: clear one-line messages, exit 2 only when nothing was captured.

Here the tests that start real processes; those that start none are in tests/unit/test_inspect_hostile.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import inspect_json, run_hangwatch


def _one_clear_line(stderr: str) -> None:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("hangwatch: ")
    assert "Traceback" not in stderr


@pytest.mark.e2e
def test_no_such_pid():
    r = run_hangwatch("inspect", "4194303")
    assert r.returncode == 2
    _one_clear_line(r.stderr)
    assert "no process with pid 4194303" in r.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(
    "args",
    [
        ["inspect"],
        ["inspect", "abc"],
        ["inspect", "1", "--window", "-1"],
        ["inspect", "1", "--window", "x"],
        ["inspect", "0"],
        ["nosuchcommand"],
        ["inspect", "1", "--bogus"],
    ],
)
def test_bad_arguments(args):
    r = run_hangwatch(*args)
    assert r.returncode == 2, r
    _one_clear_line(r.stderr)
    assert r.stdout == ""


@pytest.mark.e2e
def test_non_python_process(start_job):
    job = start_job(["/bin/sh", "-c", 'echo "ready $$" > "$HW_READY"; exec sleep 300'])
    incident = inspect_json(job.pid, window=1.0)
    rc = incident["findings"][0]
    assert rc["cause"] == "unknown"
    assert any("not a Python process" in e for e in rc["evidence"])
    assert incident["processes"][0]["threads"][0]["frames"] == []


@pytest.mark.e2e
def test_py_spy_missing_still_diagnoses_state(start_job):
    job = start_job("sleeper.py")
    r = run_hangwatch(
        "inspect", str(job.pid), "--window", "1", "--json", env={"HANGWATCH_PY_SPY": "/nonexistent/py-spy"}
    )
    assert r.returncode == 0, r.stderr
    assert "pip install py-spy" in r.stderr
    incident = json.loads(r.stdout)
    assert incident["processes"][0]["pid"] == job.pid
    assert incident["processes"][0]["state"] == "S"


@pytest.mark.e2e
def test_process_that_exits_during_capture(start_job):
    job = start_job(
        [
            sys.executable,
            "-c",
            "import os,time; open(os.environ['HW_READY'],'w').write(f'ready {os.getpid()}'); time.sleep(0.8)",
        ]
    )
    r = run_hangwatch("inspect", str(job.pid), "--window", "3", "--json")
    assert r.returncode == 0, r.stderr
    incident = json.loads(r.stdout)
    assert incident["processes"][0]["pid"] == job.pid


@pytest.mark.e2e
def test_d_state_process_is_captured_without_hanging(start_job):
    job = start_job("dstate.py")
    incident = inspect_json(job.pid, window=1.0)
    main = next(p for p in incident["processes"] if p["pid"] == job.pid)
    assert main["state"] == "D"
    assert main["threads"][0]["frames"], "nonblocking py-spy must still read the stack"
    rc = incident["findings"][0]
    assert rc["cause"] == "io.storage_wait"
    assert any("kernel_clone" in e for e in rc["evidence"])


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
# Root without CAP_SYS_PTRACE: refused the same way (py-spy: "Permission denied (os error 13)"), and it reads
# the interpreter and the venv wherever they live (a venv under /root, mode 700, is closed to nobody).
NO_PTRACE = ["setpriv", "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace"]


def _nobody_can_run_hangwatch() -> str | None:
    """Why the unprivileged user cannot run this environment's hangwatch, or None when it can."""
    try:
        r = subprocess.run(
            [*NOBODY, sys.executable, "-c", "import hangwatch.cli, psutil"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HOME": "/tmp"},
        )
    except OSError as e:
        return str(e)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]


def _assert_refusal_explained(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode == 0, r.stderr
    assert "ptrace not permitted" in r.stderr
    assert "CAP_SYS_PTRACE" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.e2e
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_ptrace_refused_is_explained(start_job):
    """As another user: where that user cannot read this venv (under /root, mode 700) the set-up cannot run,
    and the test says so; the refusal itself is tested below whatever the venv's place."""
    why = _nobody_can_run_hangwatch()
    if why is not None:
        pytest.skip(
            f"uid 65534 cannot run this environment's interpreter ({why}); "
            "test_ptrace_refused_without_the_capability_is_explained tests the refusal"
        )
    job = start_job("sleeper.py")
    r = subprocess.run(
        [*NOBODY, sys.executable, "-m", "hangwatch", "inspect", str(job.pid), "--window", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": "/tmp"},
    )
    _assert_refusal_explained(r)


@pytest.mark.e2e
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_ptrace_refused_without_the_capability_is_explained(start_job):
    job = start_job("sleeper.py")
    r = subprocess.run(
        [*NO_PTRACE, sys.executable, "-m", "hangwatch", "inspect", str(job.pid), "--window", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    _assert_refusal_explained(r)
    assert json.loads(r.stdout)["processes"], "the processes are still listed from /proc"
