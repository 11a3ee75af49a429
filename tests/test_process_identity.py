"""Who a process is, by what it runs, never by a word in a path: hangwatch's supervisor, a launcher, the job."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hangwatch.capture.proc import find_root, is_launcher
from hangwatch.launcher import is_launcher_command, is_supervisor_command, program


@pytest.mark.parametrize(("argv", "expected"), [
    (["/home/u/hangwatch-venv/bin/python", "train.py"], ("train.py", "")),
    (["/usr/bin/python3.11", "-u", "-W", "ignore", "/src/hangwatch/train.py", "--lr", "1"], ("train.py", "--lr")),
    (["python", "-m", "torch.distributed.run", "--nproc-per-node", "2"], ("torch.distributed.run", "--nproc-per-node")),
    (["python3", "-mhangwatch", "run"], ("hangwatch", "run")),
    (["/venv/bin/python", "/venv/bin/accelerate", "launch", "t.py"], ("accelerate", "launch")),
    (["/opt/torchrun-tools/job.sh", "x"], ("job.sh", "x")),
    (["python", "-c", "import hangwatch"], ("-c", "")),
    ([], ("", "")),
])
def test_program_is_what_the_command_runs(argv, expected):
    assert program(argv) == expected


@pytest.mark.parametrize(("argv", "launcher"), [
    (["/venv/bin/python", "/venv/bin/torchrun", "--nproc-per-node", "2", "t.py"], True),
    (["python", "-m", "torch.distributed.launch", "t.py"], True),
    (["/venv/bin/python", "/venv/bin/accelerate", "launch", "t.py"], True),
    (["/venv/bin/python", "/venv/bin/accelerate", "config"], False),
    (["deepspeed", "t.py"], True),
    (["python", "/home/u/torchrun-experiments/train.py"], False),  # a folder named after a launcher
    (["/home/u/venvs/deepspeed/bin/python", "train.py"], False),   # a venv named after a launcher
])
def test_launcher_by_what_runs(argv, launcher):
    assert is_launcher_command(argv) is launcher
    assert is_launcher("python3", tuple(argv)) is launcher


@pytest.mark.parametrize(("argv", "supervisor"), [
    (["/venv/bin/python", "/venv/bin/hangwatch", "run", "--", "python", "t.py"], True),
    (["python", "-m", "hangwatch", "inspect", "12"], True),
    (["/root/.cache/hangwatch-venv/bin/python", "train.py"], False),
    (["python", "/home/u/hangwatch/train.py"], False),
    (["python", "hangwatch.py"], False),
])
def test_supervisor_by_what_runs(argv, supervisor):
    assert is_supervisor_command(argv) is supervisor


def _chain(tmp_path: Path, supervisor_env: bool) -> tuple[subprocess.Popen[bytes], int]:
    """A Python parent (no hangwatch in its command) that starts a Python child in its session; with
    ``supervisor_env`` the child's environment names the parent as its supervisor, as `hangwatch run` does."""
    pidfile = tmp_path / "child.pid"
    code = ("import os, subprocess, sys, time\n"
            "env = dict(os.environ)\n"
            f"if {supervisor_env!r}: env['HANGWATCH_SUPERVISOR_PID'] = str(os.getpid())\n"
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], env=env)\n"
            f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
            "c.wait()\n")
    parent = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if pidfile.exists() and pidfile.read_text():
            return parent, int(pidfile.read_text())
        time.sleep(0.05)
    os.killpg(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)
    pytest.fail("the child never started")


@pytest.mark.parametrize("named", [True, False])
def test_find_root_stops_at_the_supervisor_the_job_names(tmp_path, named):
    parent, child = _chain(tmp_path, supervisor_env=named)
    try:
        assert find_root(child) == (child if named else parent.pid)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
