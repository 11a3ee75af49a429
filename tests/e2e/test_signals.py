"""A signal handler is a way out of a wait: Python runs it on the main thread, inside a lock's acquire, so an Event
that a handler sets can be set while the main thread waits on it. A launcher that waits for its worker's SIGCHLD (or
a SIGUSR1 the worker sends) was proven `code.deadlock` at the first look and killed (exit 125, "a bug, do not
requeue") while its worker computed; its twin with no handler is still proven at the first look."""

from __future__ import annotations

import pytest
from conftest import marker, only_slow_incidents, py, root_cause

QUICK = ["--min-stall", "3", "--capture-window", "1", "--kill-grace", "2", "--on-hang", "kill"]


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["sigchld", "usr1"])
def test_a_launcher_waiting_for_its_workers_signal_is_not_killed(run, mode):
    r = run(*QUICK, *py("signalled_launcher.py", mode, "12"), timeout=90)
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    assert b"step 2/2: worker exited 0" in r.stdout
    only_slow_incidents(run)
    looks = [e for e in run.events() if e["event"] == "extended"]
    assert looks, "12 s without output at --min-stall 3 should have been looked at"
    assert all(e["verdict"] == "slow" for e in looks), looks


@pytest.mark.e2e
def test_the_same_wait_with_no_handler_is_proven_at_the_first_look(run):
    r = run(*QUICK, *py("signalled_launcher.py", "none", "60"), timeout=90)
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    root = root_cause(run.hang())
    assert (root["cause"], root["proof"]["kind"]) == ("code.deadlock", "hang"), root
    assert (root["where"]["file"], root["where"]["line"]) == marker("signalled_launcher.py")
    assert run.summary()["incidents"] == 1  # the first look proves it
