"""Python stacks through py-spy: one ``py-spy dump --json`` per PID, all in parallel.

Measured on this kind of machine (docs/facts.md#reading-stacks-with-py-spy): ``--subprocesses`` drops
processes, a blocking attach to a ``D``-state process never returns, and a ``T``-state process
fails a blocking attach. A blocking read stops every thread of the process (ptrace), and a stop ends a
write blocked on a full pipe with a short count: Python's buffered writer then loses the rest (a helper's
400 KB dump arrived as 65,536 bytes). So: one call per PID, started together, each bounded by one shared
deadline, ``--nonblocking`` when any thread is in ``D`` or ``T`` or in a call a stop would cut short, or the
process is writing (``why_not_stop``: the one place every py-spy read of the job asks).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from hangwatch.capture.proc import PROC, read_io, read_stat, tracer_of
from hangwatch.capture.syscalls import Call, cut_short_by_a_stop, read_blocked_call, read_call
from hangwatch.errors import CaptureError
from hangwatch.records.evidence import Frame
from hangwatch.records.values import frozen

DEFAULT_TIMEOUT_S = 8.0


@frozen
class RawThread:
    """One thread of a py-spy dump."""

    tid: int  # OS thread id
    name: str | None
    active: bool
    owns_gil: bool
    frames: tuple[Frame, ...]  # innermost first


@frozen
class StackResult:
    """One process's py-spy dump: its threads, or why none could be read."""

    threads: tuple[RawThread, ...] | None
    error: str | None  # one line a person can act on when threads is None
    stopped: bool = False  # read with a blocking attach (every thread stopped for the read)
    unstopped: str | None = None  # why it was read without a stop, where that is a fact of the job (a blocked write)


def find_py_spy() -> str | None:
    """$HANGWATCH_PY_SPY if set, else py-spy beside this interpreter (a venv's bin/), else on PATH."""
    override = os.environ.get("HANGWATCH_PY_SPY")
    if override is not None:
        return override if os.access(override, os.X_OK) else None
    beside = Path(sys.executable).parent / "py-spy"
    if beside.exists():
        return str(beside)
    return shutil.which("py-spy")


def require_py_spy() -> str:
    """The py-spy binary to use; CaptureError with the fix when there is none."""
    path = find_py_spy()
    if path is None:
        raise CaptureError(
            "py-spy is not installed, so no Python stacks can be read",
            "Install it with `pip install py-spy` in hangwatch's environment",
        )
    return path


# A thread that is running when the kernel is read may block in a write during the stop that follows, and lose
# its bytes all the same (measured: a helper flooding a pipe with 1 MiB writes under -u, read every 50 ms with
# only the blocked-write check, was stopped while running once in ~34 reads and lost 786,432 bytes in 2 of 3
# runs). So a process that wrote in a short watch before the read is not stopped either: a writer heavy enough to
# fill a pipe writes within it, and one that writes a line now and then never finds the pipe full.
WRITE_WATCH_S = 0.01
# And on a crowded machine a writer may not run at all in those 10 ms, then be stopped mid-write (seen in suite runs:
# 1 read in 44 lost 917,504 bytes; another lost bytes at its first read of the writer): a process is stopped only
# once this hangwatch has seen it write nothing for QUIET_S, over its earlier reads of it.
QUIET_S = 1.0
# Nor is a process stopped whose thread has slept since an earlier read to a deadline that is now within
# WAKE_MARGIN_S: the stop lands after py-spy has started (10 ms alone, ~0.1 s beside six busy loops), and a thread that
# wakes into a write on a full pipe by then is cut short (a helper napping before each 512-KiB write, read every
# 0.1 s: 0.4-1.6 of 2 MiB lost in 3 of 3 runs; in CI a job printing 64-KiB lines after a 6-s sleep lost output, most
# likely so). The deadline is the one the thread passed to its sleep or poll (capture/syscalls.py), absolute, or
# its request less its age; a loop of short waits shows a new one at every read and is stopped as before (torchrun's
# agent sleeps 0.1 s at a time). A timed futex wait (the GIL's 5 ms, an Event's timeout) is not read, and Python 3.10's
# time.sleep (a select with a relative timeout) only where its request less the thread's age leaves something.
# Under a loaded CI (four test workers on two cores) the same helper lost 384 KiB of 2 MiB once in 287 reads at a
# margin of 1 s (2026-12-04, fresh-clone CI, not reproduced alone nor beside four busy loops): the stop is taken to have
# landed more than 1 s after the check (py-spy's start under load), so the margin is 2 s.
WAKE_MARGIN_S = 2.0
WOKE_MARGIN_S = 10.0  # a thread running this soon after the timer it waited for ended is not stopped
DEADLINE_SLACK_S = 0.05  # two reads of one wait's deadline agree within this (a relative one: its bound moves)
_deadlines: dict[tuple[int, int], tuple[float, float]] = {}  # (pid, tid) -> (a wait's deadline, when first seen)
# A process once seen blocked in a write a stop would cut short is not stopped for WRITER_MEMORY_S after: it fills a
# pipe in bursts, and each check before a stop is a moment that a slow start of py-spy may outlast (a fresh-clone CI,
# 2026-12-07: the napping helper above lost 384 KiB of 2 MiB once in 333 reads, 73 of them stops, at a 2-s margin).
WRITER_MEMORY_S = 60.0
_writers: dict[int, tuple[float, int]] = {}  # pid -> (when last seen blocked in such a write, its start ticks)
_quiet: dict[int, tuple[int, float, int]] = {}  # pid -> (its wchar when last read, since when, its start ticks)


@frozen
class Refusal:
    """Why a process is read without a stop; ``said``: a fact about the job worth its incident's notes (a thread
    blocked in a write), not only a caution (it wrote a moment ago)."""

    why: str
    said: bool = False


def why_not_stop(pids: Collection[int], watch_s: float = WRITE_WATCH_S) -> dict[int, Refusal]:
    """pid -> why a read must not stop it (it is read with ``--nonblocking`` then), for the pids where a stop is
    not safe: a thread in uninterruptible I/O (a blocking attach never returns), one stopped (it fails), one
    blocked in a call a stop would cut short (a write to a full pipe: the job would lose what it had left to
    write), a process that wrote during ``watch_s`` (one wait for all), or one not yet seen quiet for QUIET_S. A
    thread waiting in the kernel cannot move its stack, so reading it without a stop reads the same stack; a running
    thread of such a process may be read torn (bench/unstopped.py measures how often)."""
    wrote_before = {pid: _wchar(pid) for pid in pids}
    if watch_s > 0 and pids:
        time.sleep(watch_s)
    out = {}
    at = time.monotonic()
    for pid in pids:
        why = _thread_refusing_a_stop(pid)
        before, now = wrote_before[pid], _wchar(pid)
        quiet = _quiet_for(pid, before, now, at)
        if why is not None:
            out[pid] = why
        elif before is not None and now is not None and now > before:
            out[pid] = Refusal(f"it wrote {now - before} bytes in {watch_s * 1000:.0f} ms; a stop may land in a write")
        elif quiet is not None and quiet < QUIET_S:
            out[pid] = Refusal(f"it has been seen quiet for {quiet:.1f} s only; a stop may land in a write")
    return out


def _quiet_for(pid: int, before: int | None, now: int | None, at: float) -> float | None:
    """Seconds ``pid`` has been seen writing nothing, over this hangwatch's reads of it (0 when first read, or seen
    writing now); None where its counters cannot be read."""
    st = read_stat(PROC / str(pid) / "stat")
    if now is None or st is None:
        return None
    last = _quiet.get(pid)
    if last is None or last[0] != now or last[2] != st.starttime or (before is not None and before != now):
        _quiet[pid] = (now, at, st.starttime)  # first read, writing, or another process with a reused pid
    if len(_quiet) > 4096:  # a long run reads many pids: forget the ones long quiet
        for old in [p for p, (_, since, _) in _quiet.items() if at - since > 60 * QUIET_S]:
            del _quiet[old]
    return at - _quiet[pid][1]


def _wchar(pid: int) -> int | None:
    """The bytes ``pid`` wrote, less what hangwatch's own serving threads in it wrote (a flight recorder's dump)."""
    return read_io(pid).get("wchar")


def _thread_refusing_a_stop(pid: int) -> Refusal | None:
    try:
        tids = os.listdir(PROC / str(pid) / "task")
    except OSError:
        return None
    caution: Refusal | None = None  # a refusal that is no fact of the job: kept while a blocked write may follow
    whole = read_stat(PROC / str(pid) / "stat")
    start, seen = whole.starttime if whole is not None else -1, _writers.get(pid)
    if seen is not None and seen[1] == start and (ago := time.monotonic() - seen[0]) < WRITER_MEMORY_S:
        caution = Refusal(f"it was seen blocked in a write to a full pipe {ago:.0f} s ago; a stop may land in its next")
    for tid in tids:
        st = read_stat(PROC / str(pid) / "task" / tid / "stat")
        if st is None:
            continue
        if st.state == "D":
            return Refusal(f"thread {tid} is in uninterruptible I/O (D), where a blocking attach never returns")
        if st.state in ("T", "t"):
            return Refusal(f"thread {tid} is stopped ({st.state}), where a blocking attach fails")
        # One reading of its call for both checks: one that wakes between two readings could be missed by both. A
        # thread that slept when its state was read and shows no call now woke in between: it runs (seen in suite
        # runs: a helper read as it woke from its nap into a 512-KiB write was stopped in it and lost 384 KiB).
        got = read_call(pid, int(tid)) if st.state == "S" else None
        if got is not None:
            call = cut_short_by_a_stop(got)
            if call is not None:
                _writers[pid] = (time.monotonic(), start)
                if len(_writers) > 4096:  # a long run reads many pids: forget the writers long quiet
                    for old in [p for p, (at, _) in _writers.items() if time.monotonic() - at > WRITER_MEMORY_S]:
                        del _writers[old]
                why = f"thread {tid} is blocked in {call}, which a stop would cut short (the job would lose bytes)"
                return Refusal(why, said=True)
            wakes = _wakes_soon(pid, int(tid), got)
            if wakes is not None and caution is None:
                caution = Refusal(
                    f"thread {tid} has waited since an earlier read for a timer that ends in {wakes * 1000:.0f} ms; "
                    "a stop may land in what it does then"
                )
        elif caution is None and (woke := _woke_lately(pid, int(tid))) is not None:
            caution = Refusal(
                f"thread {tid} runs {woke * 1000:.0f} ms after the end of the timer an earlier read saw it wait for; "
                "a stop may land in what it does now"
            )
    return caution


def _woke_lately(pid: int, tid: int) -> float | None:
    """Seconds since the timer a thread that runs now was seen waiting for ended, within WOKE_MARGIN_S; None
    otherwise. Woken, it may be on its way into a write, or in one (a long write counts in wchar only once it
    returns, and a running thread shows no call), which a stop cuts short: a helper napping 3 s between 512-KiB
    writes to a pipe lost bytes in 1 run in 4-6 of 15 s of reads under two busy loops."""
    seen = _deadlines.get((pid, tid))
    ago = time.monotonic() - seen[0] if seen is not None else None
    return ago if ago is not None and -DEADLINE_SLACK_S <= ago < WOKE_MARGIN_S else None


def _wakes_soon(pid: int, tid: int, got: Call) -> float | None:
    """Seconds until a thread's sleep or poll (``got``: the call it is in) ends by its timer, where that is within
    WAKE_MARGIN_S and the thread has waited for this same deadline since an earlier read; None otherwise (no timer
    read, a new wait). A thread read in another call forgets its timer. Keeping it, to refuse a stop for 10 s to a
    thread woken into any call (the GIL's futex on its way to a write), was tried: it reads many more processes
    without a stop, and each of the two suite runs with it failed once, as more reads without a stop may explain (a
    launcher's rendezvous store not read within 30 s; a healthy DataLoader job killed by the clock)."""
    call = read_blocked_call(pid, tid, got)
    left = call.wakes_in if call is not None and call.name != "futex" else None
    if left is None:
        _deadlines.pop((pid, tid), None)
        return None
    now = time.monotonic()
    seen = _deadlines.get((pid, tid))
    if seen is None or abs(seen[0] - (now + left)) > DEADLINE_SLACK_S:
        seen = _deadlines[(pid, tid)] = (now + left, now)  # a new wait: the first read of it
        if len(_deadlines) > 4096:  # a long run reads many threads: forget the waits long over
            for old in [k for k, (end, _) in _deadlines.items() if end < now - 60.0]:
                del _deadlines[old]
    return left if left < WAKE_MARGIN_S and seen[1] < now else None


def dump_command(
    py_spy: str,
    pid: int,
    *,
    with_locals: bool = False,
    native: bool = False,
    nonblocking: bool = False,
    refused: dict[int, Refusal] | None = None,
) -> tuple[list[str], Refusal | None] | None:
    """The py-spy command that reads ``pid`` and why it does not stop the process (None: it stops it); None when
    the read needs a stop (``native``) and the process must not be stopped. ``refused``: ``why_not_stop`` of a
    batch the caller asked at once (else it is asked here, for this pid). Every py-spy read of a job is built
    here, so none stops a process mid-write."""
    if nonblocking:
        why: Refusal | None = Refusal("asked to read without a stop")
    else:
        why = (why_not_stop([pid]) if refused is None else refused).get(pid)
    if why is not None and native:
        return None
    cmd = [py_spy, "dump", "--json", "--full-filenames", "--pid", str(pid)]
    if with_locals:
        cmd.append("--locals")
    if why is not None:
        cmd.append("--nonblocking")
    elif native:
        cmd.append("--native")  # needs the process stopped: never with --nonblocking
    return cmd, why


PY_SPY_ENV = {"PATH": "/usr/bin:/bin", "RUST_BACKTRACE": "0"}


def _classify_error(pid: int, stderr: str, attached: bool = True) -> str:
    """What py-spy's failure means, in words; ``attached``: the read attached (not --nonblocking), which another
    tracer refuses (a non-blocking read does not attach: its refusal is a permission's)."""
    text = stderr.strip().splitlines()
    joined = " ".join(text)
    if "Permission" in joined or "os error 1)" in joined or "Operation not permitted" in joined:
        tracer = tracer_of(pid) if attached else None
        if tracer is not None:  # a process has one tracer at a time: a debugger's, strace's, another py-spy's
            st = read_stat(PROC / str(tracer) / "stat")
            name = f" ({st.comm})" if st is not None else ""
            return (
                f"cannot read stacks of pid {pid}: pid {tracer}{name} traces it, and a process has one tracer at a "
                "time; its stacks are read once that detaches"
            )
        return (
            f"cannot read stacks of pid {pid}: ptrace not permitted; run hangwatch as the job's user "
            "or as root, or grant CAP_SYS_PTRACE"
        )
    if "No such file" in joined or "No such process" in joined or "os error 3" in joined:
        return f"pid {pid} exited while its stack was being read"
    if "Failed to find python version" in joined or "python interpreter" in joined.lower():
        # (also a Python process whose interpreter is not set up yet, or torn down at its exit)
        return f"py-spy found no Python interpreter in pid {pid} (e.g. none yet, or torn down at exit); no Python stack"
    last = next((line for line in text if line.startswith("Error")), text[0] if text else "no output")
    return f"py-spy could not read pid {pid}: {last[:200]}"


def _parse(payload: str) -> tuple[RawThread, ...]:
    data: list[dict[str, Any]] = json.loads(payload)
    threads = []
    for t in data:
        frames = tuple(
            Frame(
                function=str(f.get("name", "?")),
                file=str(f.get("module") or f.get("filename", "?")),
                line=int(f.get("line") or 0),
                native=bool(f.get("module")),
            )
            for f in t.get("frames", [])
        )
        threads.append(
            RawThread(
                tid=int(t.get("os_thread_id") or t.get("thread_id") or 0),
                name=t.get("thread_name"),
                active=bool(t.get("active")),
                owns_gil=bool(t.get("owns_gil")),
                frames=frames,
            )
        )
    return tuple(threads)


def dump_stacks(
    targets: dict[int, bool], py_spy: str, timeout_s: float = DEFAULT_TIMEOUT_S, native: bool = False
) -> dict[int, StackResult]:
    """Dump the stacks of ``targets`` (pid -> read without a stop in any case?) in parallel, within ``timeout_s``
    in all; each process is stopped for its read only where ``why_not_stop`` finds it safe. ``native``
    interleaves C/C++ frames (slower: 100-450 ms a torch process; it needs a stop, so a process that must not be
    stopped gets none)."""
    procs: dict[int, tuple[subprocess.Popen[str], bool, str | None]] = {}
    results: dict[int, StackResult] = {}
    refused = why_not_stop([pid for pid, nonblocking in targets.items() if not nonblocking])
    for pid, nonblocking in targets.items():
        command = dump_command(py_spy, pid, native=native, nonblocking=nonblocking, refused=refused)
        if command is None:
            refusal = refused.get(pid, Refusal("asked to read without a stop"))
            results[pid] = StackResult(
                None,
                f"not read natively, since that stops the process: {refusal.why}",
                unstopped=refusal.why if refusal.said else None,
            )
            continue
        cmd, why = command
        try:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=PY_SPY_ENV)
        except OSError as e:
            results[pid] = StackResult(None, f"cannot run py-spy ({e}); reinstall it with `pip install py-spy`")
            continue
        procs[pid] = (p, why is None, why.why if why is not None and why.said else None)
    deadline = time.monotonic() + timeout_s
    for pid, (p, stopped, unstopped) in procs.items():
        threads, error = _answer(p, pid, deadline, timeout_s, stopped)
        results[pid] = StackResult(threads, error, stopped, unstopped)
    return results


def _answer(
    p: subprocess.Popen[str], pid: int, deadline: float, timeout_s: float, attached: bool = True
) -> tuple[tuple[RawThread, ...] | None, str | None]:
    """One py-spy dump's threads, or why none could be read, waiting until ``deadline`` at most."""
    try:
        out, err = p.communicate(timeout=max(0.05, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        # py-spy attaches with PTRACE_SEIZE: killing it mid-dump leaves the target running.
        p.kill()
        try:
            p.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        return None, f"py-spy did not answer for pid {pid} within {timeout_s:.0f} s (process in uninterruptible I/O?)"
    if p.returncode != 0 or not out.strip().startswith("["):
        return None, _classify_error(pid, err, attached)
    try:
        return _parse(out), None
    except (ValueError, KeyError, TypeError) as e:
        return None, f"py-spy output for pid {pid} was not understood: {e}"


def resume_if_stopped(was: dict[int, str]) -> None:
    """Capture never leaves a target stopped: SIGCONT any process read (pid -> its state before the read) that was
    running before and is in stop state now. (py-spy uses PTRACE_SEIZE and should never do this; this guards
    against a tool killed mid-attach.)"""
    for pid, before in was.items():
        st = read_stat(PROC / str(pid) / "stat")
        if st is not None and st.state in ("T", "t") and before not in ("T", "t"):
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
