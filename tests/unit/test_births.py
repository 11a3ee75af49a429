"""The job's tree as the tracker knows it includes what the startup hook says started (heartbeat/born/): a worker
that started and died between two scans is gone all the same, with its parent and command (a child of a process of
the job: a helper's helper does not fill the history); a record whose process
is still alive in the job's session is the job's from then on (under the root or not: an orphan once the root is
gone, ended with the job), one alive in a session of its own left the job (a daemon: never the job's to end); a
half-written one (a temporary name) is left alone."""

from __future__ import annotations

import os
from pathlib import Path

from hangwatch.recover.terminate import JobTracker


def _pid_max() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text())


def _ticks(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return stat[stat.rindex(b")") + 2 :].split()[19].decode()


def test_a_process_born_and_gone_between_two_scans_is_gone_with_its_parent_and_command(tmp_path):
    dead = _pid_max() + 7  # never a living pid
    (tmp_path / f"{dead}-12345").write_bytes(b"4242\npython\npython\0pool.py\0--token=hunter2abcdefgh\0")
    (tmp_path / f".{dead + 1}").write_bytes(b"4242\npy")  # being written: not a record yet
    mine = f"{os.getpid()}-{_ticks(os.getpid())}"
    (tmp_path / mine).write_bytes(b"1\npytest\npytest\0")  # alive, not found by the walk: taken in
    (tmp_path / f"{dead + 2}-12346").write_bytes(b"999\npython\npython\0-c\0helper\0")  # a child of no known process
    tracker = JobTracker(dead + 100, tmp_path, session=os.getsid(0))  # the root, gone, led this session
    tracker.seen[4242] = 1.0  # its parent: the job's main process, seen before
    tracker.scan()
    [gone] = list(tracker.gone)
    assert (gone.who.pid, gone.who.ppid, gone.who.comm, gone.who.started) == (dead, 4242, "python", 12345.0)
    assert gone.who.cmdline.startswith("python pool.py --token=") and "hunter2" not in gone.who.cmdline
    assert [p.name for p in tmp_path.iterdir()] == [f".{dead + 1}"]
    assert tracker.seen == {4242: 1.0, os.getpid(): float(_ticks(os.getpid()))}
    assert os.getpid() in tracker.alive_pids()
    tracker.scan()
    assert len(tracker.gone) == 1  # read once; and one alive out of the walk's reach is not gone


def test_a_process_born_in_the_job_that_left_its_session_is_not_the_jobs(tmp_path):
    mine = f"{os.getpid()}-{_ticks(os.getpid())}"
    (tmp_path / mine).write_bytes(b"1\npytest\npytest\0")
    tracker = JobTracker(_pid_max() + 100, tmp_path, session=os.getsid(0) + 1)  # the job's session is another
    tracker.scan()
    assert tracker.seen == {} and not tracker.gone and not list(tmp_path.iterdir())


def test_without_a_births_directory_nothing_is_read(tmp_path):
    tracker = JobTracker(_pid_max() + 100, tmp_path / "none")
    tracker.scan()
    assert not tracker.gone
