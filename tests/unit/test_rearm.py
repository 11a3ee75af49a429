"""The timers that re-arm themselves, read from the source at capture (capture/rearm.py): which functions start a
Timer of themselves, where, and whether a condition stands on the way; a Timer thread shows no frame of the user's
until it fires, so the exit namer names this line (tests/e2e/test_evidence_decides.py runs it end to end)."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

from hangwatch.capture.rearm import rearming_timers
from hangwatch.records.evidence import Frame, ProcessInfo, ProcessSample, Role, ThreadSample

SOURCE = """
import threading
from threading import Timer


def flush():
    threading.Timer(1.0, flush).start()


def flush_if(stopping):
    if not stopping.is_set():
        Timer(1.0, flush_if, (stopping,)).start()


def retry(n):
    try:
        threading.Timer(0.5, function=retry, args=(n - 1,)).start()
    except RuntimeError:
        pass


def other():
    threading.Timer(1.0, flush).start()  # starts another function's timer: no re-arm


def outer():
    def inner():
        threading.Timer(1.0, outer).start()  # nested: inner's own body, not outer's
    return inner


class Beat:
    def tick(self):
        self.timer = threading.Timer(5, self.tick)
        self.timer.start()
"""


def _process(tmp_path: Path) -> ProcessInfo:
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(SOURCE))
    old = time.time() - 3600  # written before this process started: the code it runs
    os.utime(path, (old, old))
    return ProcessInfo(
        pid=os.getpid(),
        ppid=os.getppid(),
        pgid=os.getpgid(0),
        sid=os.getsid(0),
        name="python",
        cmdline=("python", "-u", "-X", "dev", str(path), "--epochs", "3"),
        exe=None,
        is_python=True,
        role=Role.MAIN,
        rank=None,
        local_rank=None,
        world_size=None,
        create_time=time.time(),
        stdout=None,
        stderr=None,
        stdout_is_file=False,
    )


def _sample(frames: tuple[Frame, ...]) -> ProcessSample:
    thread = ThreadSample(7, "Thread-2", "S", None, 0, False, False, frames)
    return ProcessSample(time.time(), "S", 0.0, None, None, None, None, None, 2, (thread,), None)


TIMER = (Frame("Event.wait", "/usr/lib/python3.11/threading.py", 629), Frame("Timer.run", "/x/threading.py", 1399))


def test_the_functions_that_start_a_timer_of_themselves_are_read_with_their_line_and_condition(tmp_path):
    info = _process(tmp_path)
    found = {(r.function, r.conditional): r for r in rearming_timers(info, (_sample(TIMER),))}
    assert set(found) == {("flush", False), ("flush_if", True), ("retry", True), ("tick", False)}, found
    flush = found[("flush", False)]
    assert flush.file == str(tmp_path / "job.py") and flush.code == "threading.Timer(1.0, flush).start()"
    lines = (tmp_path / "job.py").read_text().splitlines()
    assert all(lines[r.line - 1].strip() == r.code for r in found.values())


def test_nothing_is_read_without_a_timer_thread_or_from_a_file_edited_since_the_start(tmp_path):
    info = _process(tmp_path)
    plain = (Frame("Event.wait", "/usr/lib/python3.11/threading.py", 629),)
    assert rearming_timers(info, (_sample(plain),)) == ()
    os.utime(tmp_path / "job.py")  # written now, after this process started: not the code it runs
    assert rearming_timers(info, (_sample(TIMER),)) == ()
