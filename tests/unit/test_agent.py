"""`hangwatch agent`: which processes it reads, and which jobs it takes (the e2e test: tests/e2e/test_attach.py)."""

from __future__ import annotations

import json
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
    for name in ("_is_python", "_has_torch"):
        monkeypatch.setattr(agent, name, lambda pid: read.append(pid) or False)
    monkeypatch.setattr(agent, "_supervisor_run_dir", lambda pid: read.append(pid) or None)
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


def _summary(run_dir, **fields):
    from hangwatch.records.run import RunState, RunSummary

    base = dict(command=("python", "train.py"), run_dir=str(run_dir), state=RunState.PROGRESSING, attempts=1)
    base |= dict(exit_code=None, started_at=1.0, ended_at=None, wall_seconds=2.0, last_step=7, incidents=1)
    base |= dict(stalled_seconds=0.0, goodput=None, host="h", supervisor_pid=os.getpid())
    return json.dumps(RunSummary(**(base | fields)).to_dict())


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_a_supervised_run_is_listed_from_its_summary_only_where_its_user_owns_the_directory_and_the_file(tmp_path):
    """The job's environment names the run directory: the agent reads its summary.json only where the job's user owns
    both, neither a link, and shows it as the run's own endpoint would (its incidents as one count)."""
    nobody = 65534
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(_summary(run))
    assert agent._read_summary(str(run), nobody) is None  # root's, not the job user's
    os.chown(run, nobody, -1)
    assert agent._read_summary(str(run), nobody) is None  # the file is still root's
    os.chown(run / "summary.json", nobody, -1)
    summary = agent._read_summary(str(run), nobody)
    assert summary is not None and summary.last_step == 7
    assert agent._read_summary(str(run) + "/", nobody) is not None
    names = {f.name: f for f in agent._run_families(summary, "run")}
    assert [s.labels for s in names["hangwatch_info"].samples] == [
        {"run": "run", "node": "0", "host": "h", "command": "train"}
    ]
    assert [(s.labels["cause"], s.value) for s in names["hangwatch_incidents"].samples] == [("", 1)]
    linked = tmp_path / "linked"  # the directory itself a link (with a trailing slash too)
    linked.symlink_to(run)
    assert agent._read_summary(str(linked), nobody) is None
    assert agent._read_summary(str(linked) + "/", nobody) is None
    secret = tmp_path / "secret.json"  # a link the user made to a file of root's
    secret.write_text(_summary(run, last_step=99))
    (run / "summary.json").unlink()
    (run / "summary.json").symlink_to(secret)
    os.lchown(run / "summary.json", nobody, -1)
    assert agent._read_summary(str(run), nobody) is None
    (run / "summary.json").unlink()
    os.mkfifo(run / "summary.json")  # a FIFO: never waited on
    os.chown(run / "summary.json", nobody, -1)
    assert agent._read_summary(str(run), nobody) is None
    assert agent._read_summary("relative/run", nobody) is None
    assert agent._read_summary(f"/proc/{os.getpid()}/cwd", 0) is None


@pytest.mark.parametrize(
    "text",
    ["[]", "7", "[" * 100_000, '{"command": 5}', None],
    ids=["a list", "a number", "nested past the recursion limit", "fields of the wrong type", "wrong values"],
)
def test_a_summary_that_is_not_one_is_left_out_and_never_breaks_a_scrape(tmp_path, text):
    run = tmp_path / "run"
    run.mkdir()
    if text is None:  # every field there, of the wrong kind for a metric
        text = _summary(run).replace('"last_step": 7', '"last_step": "seven"').replace('"host": "h"', '"host": 5')
    (run / "summary.json").write_text(text)
    summary = agent._read_summary(str(run), os.geteuid())
    assert summary is None or agent._run_families(summary, "run") == []


def test_a_supervised_run_whose_supervisor_is_gone_or_that_ended_is_not_listed(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    gone = max(p.pid for p in psutil.process_iter()) + 10_000
    (run / "summary.json").write_text(_summary(run, supervisor_pid=gone))
    assert agent._read_summary(str(run), os.geteuid()) is None
    (run / "summary.json").write_text(_summary(run, ended_at=3.0))
    assert agent._read_summary(str(run), os.geteuid()) is None


def test_a_watch_limited_to_its_jobs_owner_sees_no_other_users_processes():
    """`hangwatch attach` limits every scan of the machine (tree walks, fd and lock scans) to the job's owner."""
    from hangwatch.capture import proc

    every = proc.list_pids()
    try:
        proc.read_only_users({os.geteuid()})
        mine = proc.list_pids()
        assert os.getpid() in mine and set(mine) <= set(every)
        assert all(proc.owner_of(p) in (os.geteuid(), None) for p in mine)
        proc.read_only_users({max(p.uids().effective for p in psutil.process_iter()) + 4242})  # a user with none
        assert proc.list_pids() == [] and proc.narrowed() and not proc.may_read(os.getpid())
        me = os.getpid()  # every reader answers as for a process that is gone
        assert proc.read_cmdline(me) == () and proc.read_environ(me) == {} and proc.exe_of(me) is None
        assert proc.read_stat(proc.PROC / str(me) / "stat") is None and proc.fd_target(me, 0) is None
        from hangwatch.capture.pipes import pipe_holders

        assert pipe_holders("pipe:[1]", [])[1] is False  # a search of one user's processes is not complete
    finally:
        proc.read_only_users(None)
    assert os.getpid() in proc.list_pids()


def test_a_lock_holder_the_watch_may_not_read_decides_nothing():
    from hangwatch.diagnose.state import VERDICTS, holder_state
    from hangwatch.records.evidence import UNREAD, LockHolder

    h = LockHolder(4242, "", "nobody", UNREAD, None, None, None, False)
    assert holder_state(h) == "unknown" and VERDICTS["unknown"] == (None, False)
