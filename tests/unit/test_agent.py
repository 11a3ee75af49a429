"""`hangwatch agent`: which processes it reads, and which jobs it takes (the e2e test: tests/e2e/test_attach.py)."""

from __future__ import annotations

import os

import psutil
import pytest

from hangwatch.errors import UsageError
from hangwatch.supervise import agent


def test_the_agent_reads_nothing_of_a_user_it_was_not_told_to_watch(monkeypatch):
    """Only the owner of /proc/PID is looked at for another user's process: none of its files is read."""
    read: list[int] = []
    real_stat = agent.proc.read_stat

    def stat(path):
        read.append(int(path.parent.name))
        return real_stat(path)

    monkeypatch.setattr(agent.proc, "read_stat", stat)
    for name in ("_is_python", "_has_torch", "_supervised"):
        monkeypatch.setattr(agent, name, lambda pid: read.append(pid) or False)
    nobody = max(p.uids().real for p in psutil.process_iter()) + 4242  # a uid no process has
    assert agent.find_jobs({nobody}, set()) == []
    mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    assert set(read) <= mine, set(read) - mine  # the agent's own line only (never a job it could end)
    read.clear()
    agent.find_jobs({os.getuid()}, set())
    assert set(read) - mine, "this user's processes are read"


def test_a_user_is_named_or_every_user():
    assert agent.user_ids(["*"]) is None
    assert agent.user_ids(["root", "0"]) == {0}
    with pytest.raises(UsageError, match="no user is named"):
        agent.user_ids(["no-such-user-hw"])
