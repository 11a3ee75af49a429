"""Who a process is, by what it runs, never by a word in a path: hangwatch's supervisor, a launcher, the job.

Here the tests that start real processes; those that start none are in tests/unit/test_process_identity.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hangwatch.capture.proc import find_root


def _chain(tmp_path: Path, supervisor_env: bool) -> tuple[subprocess.Popen[bytes], int]:
    """A Python parent (no hangwatch in its command) that starts a Python child in its session; with
    ``supervisor_env`` the child's environment names the parent as its supervisor, as `hangwatch run` does."""
    pidfile = tmp_path / "child.pid"
    code = (
        "import os, subprocess, sys, time\n"
        "env = dict(os.environ)\n"
        f"if {supervisor_env!r}: env['HANGWATCH_SUPERVISOR_PID'] = str(os.getpid())\n"
        "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], env=env)\n"
        f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
        "c.wait()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if pidfile.exists() and pidfile.read_text():
            return parent, int(pidfile.read_text())
        time.sleep(0.05)
    os.killpg(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)
    pytest.fail("the child never started")


@pytest.mark.e2e
@pytest.mark.parametrize("named", [True, False])
def test_find_root_stops_at_the_supervisor_the_job_names(tmp_path, named):
    parent, child = _chain(tmp_path, supervisor_env=named)
    try:
        assert find_root(child) == (child if named else parent.pid)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
