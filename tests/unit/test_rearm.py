"""The timers that re-arm themselves, read from the source at capture (capture/rearm.py): which functions start a
Timer of themselves, where, and whether a condition, a return or a raise stands on the way; a Timer thread shows no
frame of the user's but while its callback runs, so the exit namer names this line (tests/e2e/test_evidence_decides.py
runs it end to end)."""

from __future__ import annotations

import dataclasses
import os
import textwrap
import time
from dataclasses import replace
from pathlib import Path

from hangwatch.capture.locals import START_SLACK_S
from hangwatch.capture.rearm import daemon_threads, exit_timers, rearming_timers
from hangwatch.diagnose import diagnose
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.state import thread_state
from hangwatch.records.evidence import (
    Evidence,
    Frame,
    ProcessEvidence,
    ProcessInfo,
    ProcessSample,
    Role,
    ThreadSample,
)
from hangwatch.records.incident import Verdict

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


def guarded(stop):
    if stop.is_set():
        return  # the fix hangwatch gives: a way out above the call
    threading.Timer(1.0, guarded, (stop,)).start()


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

    def close(self):
        threading.Timer(1.0, self.sock.close).start()  # another object's close: no re-arm


class Flusher:
    def tick(self):
        threading.Timer(1.0, self.tick).start()
        if self.done():
            self.timer.cancel()


def stops_itself(proc):
    proc.poll() is not None and sys.exit(0)
    threading.Timer(1.0, stops_itself, (proc,)).start()
"""


def _process(tmp_path: Path, source: str = SOURCE) -> ProcessInfo:
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(source))
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


TIMER = (Frame("Event.wait", "/usr/lib/python3.11/threading.py", 629), Frame("Timer.run", "/x/threading.py", 1399))
SHUTDOWN = (Frame("_shutdown", "/usr/lib/python3.11/threading.py", 1583),)


def _sample(frames: tuple[Frame, ...], exiting: bool = True) -> ProcessSample:
    main = ThreadSample(os.getpid(), "MainThread", "S", None, 0, False, False, SHUTDOWN if exiting else ())
    thread = ThreadSample(7, "Thread-2", "S", None, 0, False, False, frames)
    return ProcessSample(time.time(), "S", 0.0, None, None, None, None, None, 2, (main, thread), None)


def test_the_functions_that_start_a_timer_of_themselves_are_read_with_their_line_and_condition(tmp_path):
    info = _process(tmp_path)
    found = {(r.function, r.conditional): r for r in rearming_timers(info, (_sample(TIMER),))}
    assert set(found) == {
        ("flush", False),
        ("flush_if", True),
        ("retry", True),
        ("guarded", True),
        ("stops_itself", True),
        ("Beat.tick", True),  # Flusher.tick too: which one a timer's self.tick runs is not read
        ("Flusher.tick", True),
    }, found
    flush = found[("flush", False)]
    assert flush.file == str(tmp_path / "job.py") and flush.code == "threading.Timer(1.0, flush).start()"
    lines = (tmp_path / "job.py").read_text().splitlines()
    assert all(lines[r.line - 1].strip().startswith(r.code or "?") for r in found.values())


def test_a_method_that_re_arms_alone_under_its_name_is_read_with_no_condition(tmp_path):
    info = _process(
        tmp_path, "import threading\nclass Beat:\n    def tick(self):\n        threading.Timer(5, self.tick).start()\n"
    )
    assert [(r.function, r.line, r.conditional) for r in rearming_timers(info, (_sample(TIMER),))] == [
        ("Beat.tick", 4, False)
    ]


def test_nothing_is_read_but_with_a_timer_nor_from_a_file_edited_since_the_start(tmp_path):
    """Read where a Timer thread is there: the exit waiting on it, or a process holding what others wait for (a
    Timer that re-arms itself is no way out of their wait)."""
    info = _process(tmp_path)
    thread = (Frame("Event.wait", "/usr/lib/python3.11/threading.py", 629), Frame("Thread.run", "/x/threading.py", 9))
    assert rearming_timers(info, (_sample(thread),)) == ()  # a plain thread: no Timer
    assert rearming_timers(info, (_sample(TIMER, exiting=False),)) != ()  # main still runs: read all the same
    later = time.time() + START_SLACK_S + 60  # written after this process started (past the slack): not its code
    os.utime(tmp_path / "job.py", (later, later))
    assert rearming_timers(info, (_sample(TIMER),)) == ()


def _timer(tid: int, name: str, timeout: bool | None, wakes_in: float | None) -> ThreadSample:
    return ThreadSample(
        tid, name, "S", "futex_wait_queue", 0, False, False, TIMER, syscall="futex", timeout=timeout, wakes_in=wakes_in
    )


def test_a_timer_started_during_the_look_is_never_blocked_for_the_whole_window(tmp_path):
    """The daemon twin of exit_timers.py, as a CI capture read it: the exit waits on a one-shot Timer due in 2 s
    (read), beside a daemon heartbeat that re-arms every 0.5 s. One heartbeat Timer started after the first sample,
    its wait's timeout not read, idle in each of its 3 samples: it was said 'blocked at 0% CPU for the whole window'
    and the exit hung on it by --min-stall (a false kill). A thread started during the look stayed nowhere for the
    whole window: no verdict of its own; the exit is left to its timer."""
    info = _process(tmp_path, "import threading\ndef beat():\n    threading.Timer(0.5, beat).start()\n")
    rows = [
        (
            _timer(7, "Thread-2", True, 2.0 - 0.35 * i),
            _timer(9, "python", None, None) if i else _timer(8, "Thread-19", True, 0.3),
        )
        for i in range(4)
    ]
    ev = _exiting(info, rows, 0.35, read=False)
    view = Scene.of(ev).views[0]
    born = next(t for t in view.threads if t.tid == 9)
    assert not born.whole and not born.measured and not born.blocked
    assert thread_state(view, born).state == "started" and "started during the look" in thread_state(view, born).fact
    d = diagnose(ev)
    assert d.verdict != Verdict.HUNG, [f.summary for f in d.findings]


FIRED = (
    Frame("Event.wait", "/usr/lib/python3.11/threading.py", 629),
    Frame("Thread.start", "/usr/lib/python3.11/threading.py", 964),
    Frame("flush", "job.py", 3),
    Frame("Timer.run", "/usr/lib/python3.11/threading.py", 1401),
)
BOOT = (
    Frame("Thread._bootstrap_inner", "/usr/lib/python3.11/threading.py", 1036),
    Frame("Thread._bootstrap", "/usr/lib/python3.11/threading.py", 1002),
)


def _in(tid: int, frames: tuple[Frame, ...]) -> ThreadSample:
    """A Timer thread of the chain as the kernel reads it: in its timed wait, in its callback's untimed wait for the
    next one to start, or running its bootstrap."""
    if frames is BOOT:
        return ThreadSample(tid, f"Thread-{tid}", "R", None, 0, True, True, frames)
    timed = frames is TIMER
    return dataclasses.replace(_timer(tid, f"Thread-{tid}", timed, 0.3 if timed else None), frames=frames)


def _exiting(info: ProcessInfo, rows: list[tuple[ThreadSample, ...]], every: float, read: bool = True) -> Evidence:
    """A capture of ``info`` at its exit, main in threading._shutdown, the other threads of each sample as given,
    ``every`` seconds apart; the functions that re-arm a Timer read from its file (``read``: as a capture does)."""
    main = ThreadSample(info.pid, "MainThread", "S", "futex_wait_queue", 0, False, False, SHUTDOWN, "futex")
    main = dataclasses.replace(main, timeout=False)
    t0 = time.time()
    samples = tuple(
        ProcessSample(t0 + every * i, "S", 1.0, None, None, None, 0, 0, 1 + len(row), (main, *row), None, syscalls=0)
        for i, row in enumerate(rows)
    )
    rearms = rearming_timers(info, samples) if read else ()
    end = t0 + every * (len(rows) - 1)
    return Evidence(info.pid, info.pid, t0, end, 100, 2, (ProcessEvidence(info, samples, rearms=rearms),))


def _chain(info: ProcessInfo, rows: list[tuple[tuple[int, tuple[Frame, ...]], ...]]) -> Evidence:
    return _exiting(info, [tuple(_in(tid, fs) for tid, fs in row) for row in rows], 0.25)


def test_a_chain_of_timers_caught_at_a_hand_over_is_still_one_chain(tmp_path):
    """exit_timers.py under CI's load (four tests at a time): a sample caught the Timer that fired in its callback's
    start() beside the one it started, and the last caught the next one still in threading's bootstrap. Either made
    it 'two chains, or another thread' (unknown, exit 124 in CI); a hand-over is one chain: code.deadlock as always.
    Two Timers side by side in most samples stay two chains, and are not named; nor is a hand-over where nothing
    ties the one that fired to the new one (its callback on its stack, or the next of Python's thread names)."""
    info = _process(tmp_path, "import threading\ndef flush():\n    threading.Timer(0.5, flush).start()\n")
    rows = [((2, TIMER),), ((2, FIRED), (3, TIMER)), ((3, TIMER),), ((3, TIMER),), ((3, FIRED), (4, BOOT))]
    d = diagnose(_chain(info, rows))
    assert (d.verdict, d.root.cause) == (Verdict.HUNG, "code.deadlock"), [f.summary for f in d.findings]
    assert "each timer that ends leaves another" in d.root.summary, d.root.summary
    past = (Frame("Event.set", "/usr/lib/python3.11/threading.py", 600), *TIMER[1:])  # its callback returned
    d = diagnose(_chain(info, [((2, TIMER),), ((2, past), (3, TIMER)), ((3, TIMER),), ((3, TIMER),)]))
    assert "each timer that ends leaves another" in d.root.summary, d.root.summary  # Thread-2 started Thread-3
    for rows in (
        [((2, TIMER), (5, TIMER)), ((2, FIRED), (3, TIMER), (5, TIMER)), ((3, TIMER), (5, TIMER))],
        # two fast chains, new Timers in each sample, one of them caught in its callback each time
        [((10 + i, FIRED), (20 + i, TIMER)) if i != 2 else ((12, TIMER), (22, FIRED)) for i in range(5)],
        # the one that fired has left its callback and bears no name next to the new one's
        [((2, TIMER),), ((2, past), (7, TIMER)), ((7, TIMER),), ((7, TIMER),)],
    ):
        d = diagnose(_chain(info, rows))
        unnamed = [f.summary for f in d.findings if "each timer that ends leaves another" in f.summary]
        assert not unnamed, (rows, unnamed)


THREADS = """
import threading
from threading import Thread


def beat(): ...
def serve(): ...
def upload(): ...
def both(): ...
def beat_again(): ...
def reused(): ...
def maybe(): ...
def undone(): ...
def too_late(): ...


def main(imported):
    threading.Thread(target=imported, daemon=True).start()  # defined elsewhere: which thread it is, not known
    threading.Thread(target=serve, daemon=True).start()
    t = threading.Thread(target=upload)
    t.start()
    Thread(target=both, daemon=True).start()
    Thread(target=both).start()  # started both ways: neither
    h = threading.Thread(target=beat, name="heartbeat")
    h.daemon = True
    h.start()
    self_made = threading.Thread(target=upload, name="uploader")
    self_made.start()
    r = threading.Thread(target=beat_again)
    r.daemon = True
    r = threading.Thread(target=reused)  # the variable takes another thread: not made a daemon
    r.start()
    c = threading.Thread(target=maybe)
    if imported:
        c.daemon = True  # under a condition: not known
    c.start()
    u = threading.Thread(target=undone, daemon=True)
    if imported:
        u.daemon = False  # undone, under a condition or not: not a daemon
    late = threading.Thread(target=too_late)
    late.start()
    late.daemon = True  # raises once started: the thread stays as it was
    threading.Thread(None, upload, "named", daemon=True).start()  # a name passed by position
    threading.Thread(target=serve, name=f"w{imported}", daemon=True).start()  # a name made at run time: not keyed

    class Later:
        def run(self):
            t.daemon = True  # another function's t: not main's
"""


def test_the_threads_the_users_files_start_as_daemons_are_read_by_the_names_python_gives_them(tmp_path):
    info = _process(tmp_path, THREADS)
    main = ThreadSample(info.pid, "MainThread", "S", None, 0, False, False, SHUTDOWN)
    others = tuple(ThreadSample(tid, f"Thread-{tid}", "S", None, 0, False, False, TIMER) for tid in (7, 8))
    sample = ProcessSample(time.time(), "S", 0.0, None, None, None, None, None, 3, (main, *others), None)
    job = str(tmp_path / "job.py")
    assert daemon_threads(info, (sample,)) == (f"(beat_again)@{job}", f"(serve)@{job}", "heartbeat", "named")
    one = dataclasses.replace(sample, threads=(main, others[0]))
    assert daemon_threads(info, (one,)) == ()  # one thread beside main: the exit waits on it, nothing to tell apart


def test_the_timers_that_end_the_process_are_read_with_their_seconds(tmp_path):
    """faulthandler's with `exit=True` (where a thread with no Python stack, its watchdog, is there) and the kernel's
    alarm (tests/e2e/test_judgment.py runs both end to end); not one without `exit=True`, nor any object's `alarm`;
    no alarm where the file also disarms one (`alarm(0)` may have run since) or sets a SIGALRM handler (where the
    process has none, that code did not run), nor in a fork's child (it inherits neither timer, only the source)."""
    source = """
        import faulthandler, signal
        from faulthandler import dump_traceback_later
        faulthandler.dump_traceback_later(60, exit=True)
        dump_traceback_later(30, repeat=True)
        faulthandler.dump_traceback_later(9, exit=False)
        signal.alarm(12)
        signal.setitimer(signal.ITIMER_REAL, 2.5)
        clock.alarm(5)
        signal.alarm(seconds)
        signal.alarm(99999999999999999999999999999999999999999999999999)
        """
    info = _process(tmp_path, source)
    main = (Frame("<module>", info.cmdline[4], 4),)
    native = ThreadSample(7, "python", "S", None, 0, False, False, (), syscall="futex", timeout=True)
    watched = ProcessSample(
        time.time(), "S", 0.0, None, None, None, None, None, 2, (_sample(main).threads[1], native), None
    )
    read = [(x.kind, x.seconds, x.line, x.code) for x in exit_timers(info, (watched,))]
    assert read == [
        ("faulthandler", 60.0, 4, "faulthandler.dump_traceback_later(60, exit=True)"),
        ("alarm", 12.0, 7, "signal.alarm(12)"),
        ("alarm", 2.5, 8, "signal.setitimer(signal.ITIMER_REAL, 2.5)"),
        ("alarm", None, 10, "signal.alarm(seconds)"),
        ("alarm", None, 11, "signal.alarm(99999999999999999999999999999999999999999999999999)"),
    ], read
    python = ThreadSample(8, "Thread-2", "S", None, 0, False, False, TIMER)
    only_python = replace(watched, threads=(watched.threads[0], python))
    assert [x.kind for x in exit_timers(info, (only_python,))] == ["alarm"] * 4  # every thread has a Python stack
    assert exit_timers(replace(info, forked_from_parent=True), (watched,)) == ()
    for disarm in ("signal.alarm(0)", "signal.signal(signal.SIGALRM, on_timeout)"):  # (run or not: not known)
        disarmed = _process(tmp_path, source.rstrip(" ") + f"        {disarm}\n")
        assert [x.kind for x in exit_timers(disarmed, (watched,))] == ["faulthandler"], disarm
