"""A look never changes what the job writes. A blocking py-spy read stops every thread of a process (ptrace); a
write blocked on a full pipe then returns a short count. With PYTHONUNBUFFERED=1 (set by `hangwatch run` for every
job, by many images, by `python -u`) ``sys.stdout.buffer`` is the raw file, whose short count nobody checks: before
the fix the trainer got 65,536 of 400,000 bytes and the helper exited 0. Each test looks at the helper while it
waits in its write, lets the trainer read, and counts the bytes."""

from __future__ import annotations

import pytest
from conftest import SCENARIOS, inspect_json, marker, py, wait_for_event

pytestmark = pytest.mark.e2e
UNBUFFERED = {"PYTHONUNBUFFERED": "1"}  # as `hangwatch run` starts every job


def _finish(job) -> str:
    """Let the trainer read (the go file), wait for it (bounded) and return what it printed."""
    (job.tmp / "go").touch()
    job.proc.wait(timeout=30)
    return job.log.read_text()


@pytest.mark.parametrize("mode", ["buffer", "text"])
def test_inspect_of_a_helper_blocked_in_a_write_delivers_every_byte(start_job, mode):
    job = start_job("pipe_dump.py", ready_count=2, env={"HW_MODE": mode, **UNBUFFERED})
    helper = job.ready_pids()["helper"]
    incident = inspect_json(job.pid, window=1.5)
    out = _finish(job)
    assert "got 400000 of 400000 bytes" in out, out
    assert job.proc.returncode == 0
    # Its stack was read all the same, without a stop, and the incident says why.
    procs = {p["pid"]: p for p in incident["processes"]}
    assert helper in procs, list(procs)
    where = procs[helper]["where"][0]
    assert (where["file"], where["line"]) == marker("pipe_dump.py", f"WRITE-{mode}"), where
    notes = " ".join(incident["notes"])
    assert f"pid {helper} was read without stopping it" in notes and "write(2) on fd 1" in notes, notes


def _locals_once(pid: int, py_spy: str) -> None:
    from hangwatch.capture.locals import read_locals_once

    reads, _ = read_locals_once({pid: {pid}}, py_spy)
    assert [(r.function, r.line) for r in reads[pid]] == [("dump", marker("pipe_dump.py", "WRITE-buffer")[1])]


def _file_lock_locals(pid: int, py_spy: str) -> None:
    from hangwatch.capture.waits import _filelock_targets

    assert _filelock_targets(pid, {pid}, py_spy) == {}  # read; it holds no file lock


def _rendezvous_locals(pid: int, py_spy: str) -> None:
    from hangwatch.capture.rendezvous import _from_frames

    assert _from_frames(pid, py_spy) == (None, None, None, None, None)  # read; it sets up no process group


def _native(pid: int, py_spy: str) -> None:
    from hangwatch.capture.native import read_native

    stacks, notes = read_native([pid], py_spy)
    assert pid not in stacks and "write(2) on fd 1" in " ".join(notes), notes  # a native read needs a stop: none


@pytest.mark.parametrize("reader", [_locals_once, _file_lock_locals, _rendezvous_locals, _native])
def test_each_locals_and_native_read_of_a_helper_blocked_in_a_write_delivers_every_byte(start_job, reader):
    from hangwatch.capture.stacks import require_py_spy

    job = start_job("pipe_dump.py", ready_count=2, env=UNBUFFERED)
    reader(job.ready_pids()["helper"], require_py_spy())
    out = _finish(job)
    assert "got 400000 of 400000 bytes" in out, out


def test_a_run_look_of_a_helper_blocked_in_a_write_delivers_every_byte(run, tmp_path):
    ready = tmp_path / "ready"
    run.start(
        "--min-stall",
        "1",
        "--capture-window",
        "1",
        *py("pipe_dump.py"),
        env={"HW_READY": str(ready), "HW_TMP": str(tmp_path)},
    )
    wait_for_event(run, "extended", timeout=60)  # looked at (stacks of every process), found alive
    (tmp_path / "go").touch()
    out, err = run.proc.communicate(timeout=60)
    assert b"got 400000 of 400000 bytes" in out, (out[-2000:], err[-3000:])
    assert run.proc.returncode == 0


def test_a_loop_of_os_write_was_never_exposed(start_job):
    """The control: a raw write loop survives a stop (it writes the rest); the same look, the same bytes."""
    job = start_job("pipe_dump.py", ready_count=2, env={"HW_MODE": "raw", **UNBUFFERED})
    inspect_json(job.pid, window=1.0)
    out = _finish(job)
    assert "got 400000 of 400000 bytes" in out, out


def _read_until_it_ends(job, pid: int, limit_s: float, every_s: float) -> tuple[int, int, str]:
    """Read ``pid``'s stacks again and again (each read stopping it where that is safe) until the job ends (at most
    ``limit_s``): how many reads, how many stopped it, and what the job printed."""
    import time

    from hangwatch.capture.stacks import dump_stacks, require_py_spy

    py_spy, reads, stopped = require_py_spy(), 0, 0
    deadline = time.monotonic() + limit_s
    while job.proc.poll() is None and time.monotonic() < deadline:
        got = dump_stacks({pid: False}, py_spy).get(pid)
        reads += 1
        stopped += bool(got and got.stopped)
        time.sleep(every_s)
    job.proc.wait(timeout=10)
    return reads, stopped, job.log.read_text()


def test_reads_of_a_process_flooding_a_pipe_deliver_every_byte(start_job):
    """A thread that is running when the kernel is read may block in a write during the stop that follows: a
    process that wrote in the watch before the read is not stopped either (with only the blocked-write check, one
    read in ~34 stopped it and 786,432 bytes were lost in 2 of 3 runs)."""
    job = start_job("pipe_flood.py", ready_count=2)
    reads, stopped, out = _read_until_it_ends(job, job.ready_pids()["helper"], 60, every_s=0.02)
    assert "got 209715200 of 209715200 bytes" in out, (out, reads, stopped)
    assert reads >= 5, reads  # it was looked at while it wrote


def test_reads_of_a_process_whose_sleep_ends_into_a_write_deliver_every_byte(start_job):
    """A process asleep and quiet for a second is safe to stop when read, unless its sleep ends before the stop does:
    it wakes into a write on a full pipe, and the stop cuts that write short (seen in CI: a job printing 64 KiB lines
    after a 6-s sleep lost bytes of output.log, most likely to a look at the end of its sleep). The helper naps 4 s
    before each of its four 512-KiB writes, which the trainer reads in 0.8 s; it is read again and again for 19 s.
    (A stop needs it seen quiet for 1 s and 2 s from its sleep's end: a nap of 3 s left no time between the two, and
    the test, no read with a stop, failed on a machine that read it late.)"""
    job = start_job("pipe_flood.py", ready_count=2, env={"HW_NAP": "4.0"})
    reads, stopped, out = _read_until_it_ends(job, job.ready_pids()["helper"], 40, every_s=0.01)
    assert "got 2097152 of 2097152 bytes" in out, (out, reads, stopped)
    assert stopped >= 1, (reads, stopped)  # it was read with stops: asleep, far from its sleep's end


def test_a_thread_that_wakes_between_its_state_and_its_call_being_read_is_not_stopped(start_job, monkeypatch):
    """The race behind the test above's one loss in nine suite runs (384 KiB of 2 MiB): a thread's state said it
    slept, and by the time its call was read it had woken from its nap into its write and showed none. It must be
    taken as running, woken from the timer it was seen waiting for, and read without a stop. Which way the kernel's
    two readings fall cannot be chosen here: the second one is made to say "running" (the thread's real state still
    says it sleeps, in the 60-s sleep after its nap)."""
    import sys
    import time

    from hangwatch.capture import stacks

    code = "import time\nfrom _ready import ready\nready('napper')\ntime.sleep(1.5)\ntime.sleep(60)\n"
    job = start_job([sys.executable, "-c", code], env={"PYTHONPATH": str(SCENARIOS)})
    stacks.why_not_stop([job.pid], watch_s=0)  # sees the nap and its deadline
    time.sleep(2.0)  # past the nap: the thread sleeps again, its state S
    monkeypatch.setattr(stacks, "read_call", lambda pid, tid: None)
    why = stacks.why_not_stop([job.pid], watch_s=0).get(job.pid)
    assert why is not None and "after the end of the timer" in why.why and not why.said, why
    monkeypatch.undo()  # its call read as it is: a new sleep of 60 s, where a stop is safe
    assert job.pid not in stacks.why_not_stop([job.pid], watch_s=0)


def test_a_process_in_a_loop_of_short_sleeps_is_still_read_with_a_stop(start_job):
    """The other side of the rule above: a loop of 0.1-s sleeps (torchrun's agent) shows a new deadline at every read,
    never one it has waited for since an earlier read, so it is read with a stop once seen quiet, as before."""
    import sys
    import time

    from hangwatch.capture.stacks import dump_stacks, require_py_spy

    code = "import time\nfrom _ready import ready\nready('poller')\nwhile True:\n    time.sleep(0.1)\n"
    job = start_job([sys.executable, "-c", code], env={"PYTHONPATH": str(SCENARIOS)})
    py_spy, stopped = require_py_spy(), []
    deadline = time.monotonic() + 4.0
    while time.monotonic() < deadline:
        got = dump_stacks({job.pid: False}, py_spy).get(job.pid)
        stopped.append(bool(got and got.stopped))
        time.sleep(0.2)
    assert sum(stopped[len(stopped) // 2 :]) >= len(stopped[len(stopped) // 2 :]) - 1, stopped
