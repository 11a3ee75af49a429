"""Who holds what a thread waits for (capture/waits.py, capture/pipes.py): its user, age and command line, whether
its threads are parked or work (read twice, LOOK_S apart), its main thread's frames and the line where it took a
lock. Everything here reads; a holder outside the job's tree is read in non-blocking mode and never touched.
"""

from __future__ import annotations

import linecache
import os
import pwd
import re
import time

from hangwatch import signatures as sg
from hangwatch.capture import proc
from hangwatch.capture.source import held_locks
from hangwatch.capture.stacks import dump_stacks
from hangwatch.capture.syscalls import BlockedCall, read_blocked_call
from hangwatch.records.evidence import (
    UNREAD,
    Frame,
    LockHolder,
    ProcessSample,
)
from hangwatch.records.values import mutable
from hangwatch.redact import redact_text

LOOK_S = 0.5  # a holder outside the job is read twice this far apart: does it work?


LOCALS_TIMEOUT_S = 3.0


MAX_FD_SCAN_PIDS = 4096  # bounded: an OFD lock's holder is looked for in at most this many processes


O_ACCMODE, O_WRONLY, O_RDWR = 0o3, 0o1, 0o2


DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)")


def _user(pid: int) -> str | None:
    uid = proc.owner_of(pid)
    if uid is None:
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _age(pid: int, now: float) -> float | None:
    st = proc.read_stat(proc.PROC / str(pid) / "stat")
    started = proc.started_at(st.starttime) if st is not None else None
    return None if started is None else max(0.0, now - started)


def _cmdline(pid: int) -> str:
    return redact_text(" ".join(proc.read_cmdline(pid)))[:160]


@mutable
class _Look:
    """Two reads of a process: its state, CPU and bytes moved between them, and whether it stayed parked."""

    state: str | None
    cpu_percent: float | None
    moved_bytes: int | None
    parked: bool | None = None


PARKING = frozenset({"futex", "pause"})  # waits only a thread of its own (a private futex) or a signal can end


def _parked_threads(pid: int) -> dict[int, int] | None:
    """tid -> context switches, when every thread of ``pid`` sleeps in a private futex wait with no timeout
    (a lock, an event, a condition of its own, waited for forever) or in pause(); None otherwise."""
    try:
        tids = [int(t) for t in os.listdir(proc.PROC / str(pid) / "task")]
    except (OSError, ValueError):
        return None
    out: dict[int, int] = {}
    for tid in tids:
        call = read_blocked_call(pid, tid)
        switches = proc.read_ctx_switches(proc.PROC / str(pid) / "task" / str(tid) / "status")
        if call is None or call.name not in PARKING or call.timeout is not False or call.shared or switches is None:
            return None
        out[tid] = switches
    return out or None


def _look(pids: list[int]) -> dict[int, _Look]:
    """Read each of ``pids`` twice, LOOK_S apart (processes outside the job have no samples of ours)."""
    ticks = os.sysconf("SC_CLK_TCK")

    def read(pid: int) -> tuple[str, float, int | None] | None:
        st = proc.read_stat(proc.PROC / str(pid) / "stat")
        if st is None:
            return None
        io = proc.read_io(pid)
        moved = io["rchar"] + io["wchar"] if "rchar" in io and "wchar" in io else None
        return st.state, (st.utime + st.stime) / ticks, moved

    first = {p: read(p) for p in pids}
    parked_before = {p: _parked_threads(p) for p in pids}
    t0 = time.monotonic()
    time.sleep(LOOK_S)
    dt = time.monotonic() - t0
    out = {}
    for p in pids:
        a, b = first[p], read(p)
        if b is None:
            out[p] = _Look(None, None, None)
            continue
        cpu = 100.0 * (b[1] - a[1]) / dt if a is not None else None
        moved = b[2] - a[2] if a is not None and a[2] is not None and b[2] is not None else None
        before, after = parked_before[p], _parked_threads(p)
        state = b[0]
        if state in STOPPED and (a is None or a[0] not in STOPPED or b[1] != a[1]):
            # stopped at one read only, or it ran between them (a tracer's pause at each call, a scheduler's slice)
            state = "R" if a is not None and a[0] in STOPPED else a[0] if a is not None else "S"
        out[p] = _Look(state, cpu, moved, parked=before is not None and before == after)
    return out


STOPPED = ("T", "t")


def _in_job_look(samples: list[ProcessSample]) -> _Look:
    first, last = samples[0], samples[-1]
    dt = last.at - first.at
    cpu = 100.0 * (last.cpu_seconds - first.cpu_seconds) / dt if dt > 0 else None
    moved = None
    if None not in (first.rchar, first.wchar, last.rchar, last.wchar):
        moved = (last.rchar or 0) + (last.wchar or 0) - (first.rchar or 0) - (first.wchar or 0)
    tids = {t.tid for t in first.threads}
    parked = (
        len(samples) >= 2
        and dt > 0
        and bool(last.threads)
        and all(
            t.syscall in PARKING and t.timeout is False and not t.shared_futex and t.ctx_switches == 0 and t.tid in tids
            for t in last.threads
        )
    )
    state = last.state
    if state in STOPPED and (cpu or any(s.state not in STOPPED for s in samples)):  # stopped in every sample only
        state = next((s.state for s in reversed(samples) if s.state not in STOPPED), "R")
    return _Look(state, cpu, moved, parked=parked)


def _main_frames(pid: int, py_spy: str | None, nonblocking: bool) -> tuple[Frame, ...]:
    """A process's main thread stack (with the source line's text), or () when it cannot be read."""
    if py_spy is None:
        return ()
    got = dump_stacks({pid: nonblocking}, py_spy, timeout_s=3.0).get(pid)
    if got is None or not got.threads:
        return ()
    main = next((t for t in got.threads if t.tid == pid), got.threads[0])
    return tuple(
        Frame(
            f.function,
            f.file,
            f.line,
            code=(linecache.getline(f.file, f.line).strip() or None) if f.file.startswith("/") else None,
            holds=held_locks(f.file, f.line) if f.file.startswith("/") and sg.is_user(f) else (),
        )
        for f in main.frames
    )


def took_at(frames: tuple[Frame, ...], name: str | None) -> str | None:
    """Where a holder's code takes the lock ``name``: a frame inside ``with name:`` (it holds it now:
    ``holds ...``), else a ``name.acquire(`` line in a file on its stack (``takes ...``: taken there, at
    some time before; the line is not on its stack now)."""
    if name is None:
        return None
    for f in frames:
        if any(h.rstrip("()").rsplit(".", 1)[-1] == name for h in f.holds):
            return f"holds `{name}` at {f.function} ({f.file.rsplit('/', 1)[-1]}:{f.line})"
    pattern = re.compile(rf"\b{re.escape(name)}\.acquire\(")
    for file in dict.fromkeys(f.file for f in frames if sg.is_user(f)):
        function = "<module>"
        for n, text in enumerate(linecache.getlines(file), 1):
            d = DEF.match(text)
            if d:
                function = d.group(1)
            if pattern.search(text) and not text.lstrip().startswith("#"):
                return (
                    f"takes `{name}` with `{text.strip().split('#')[0].strip()[:60]}` in {function} "
                    f"({file.rsplit('/', 1)[-1]}:{n}), a line not on its stack now"
                )
    return None


def holder(
    pid: int,
    job: dict[int, list[ProcessSample]],
    py_spy: str | None,
    now: float,
    how: str,
    name: str | None,
    proven: bool = True,
    frames: tuple[Frame, ...] | None = None,
    family: _Family | None = None,
) -> LockHolder:
    """What holder ``pid`` is and does (``how`` it holds the resource, the lock's ``name`` where a frame says it): a
    process of the job from its samples, another one read twice, LOOK_S apart, with the children it waits for (and
    theirs: `flock -c` runs a shell that runs the command), all in the same look; one of another user under the agent
    named, never read. ``family``: the look a parent took for this child of it."""
    in_job = pid in job
    if not in_job and proc.unreadable(pid):  # another user's, under the agent: named, never read
        why = f"{how}; a process of another user, which this watch does not read"
        return LockHolder(pid, "", _user(pid), UNREAD, None, None, None, False, proven=proven, how=why)
    if family is None:
        family = _Family.read(pid, job)
    look = _in_job_look(job[pid]) if in_job else family.looks[pid]
    if frames is None:
        frames = job_frames(job[pid], pid) if in_job else _main_frames(pid, py_spy, nonblocking=True)
    if in_job:
        main = next((t for t in job[pid][-1].threads if t.tid == pid), None)
        wakes_in, syscall = (main.wakes_in, main.syscall) if main is not None else (None, None)
    else:
        call = family.calls.get(pid)
        wakes_in, syscall = (call.wakes_in, call.name) if call is not None else (None, None)
    waited = f"a child pid {pid} waits for in {syscall}()"
    return LockHolder(
        pid=pid,
        cmdline=_cmdline(pid),
        user=_user(pid),
        state=look.state,
        cpu_percent=None if look.cpu_percent is None else round(look.cpu_percent, 1),
        moved_bytes=look.moved_bytes,
        age_s=_age(pid, now),
        in_job=in_job,
        frames=frames,
        proven=proven,
        how=how,
        took_at=took_at(frames, name),
        parked=look.parked,
        # a sleep's timer only: a futex wait's timeout (also read) may be cut short by another thread of the holder
        wakes_in=None if wakes_in is None or syscall not in sg.SLEEP_SYSCALLS else round(wakes_in, 3),
        sleeping=syscall in sg.SLEEP_SYSCALLS if syscall else None,
        # its children's stacks are not read (a py-spy dump each): the kernel's reading and their command lines say it
        waits_for=tuple(holder(k, job, py_spy, now, waited, None, frames=(), family=family) for k in family.kids(pid)),
        stdin=proc.fd_target(pid, 0),
        call=syscall,
    )


MAX_WAITED = 6  # the processes an outside holder waits for, its children's children too, read with it at the most
WAITED_DEPTH = 3  # `flock -c CMD` (a shell, then the command), `bash run.sh` (bash, then python)


@mutable
class _Family:
    """An outside holder and the descendants it waits for with no timeout (wait4, waitid), read in one look."""

    calls: dict[int, BlockedCall | None]
    waits: dict[int, list[int]]  # pid -> the children it waits for
    looks: dict[int, _Look]

    @classmethod
    def read(cls, pid: int, job: dict[int, list[ProcessSample]]) -> _Family:
        if pid in job:
            return cls({}, {}, {})
        calls: dict[int, BlockedCall | None] = {pid: _blocked_call(pid)}
        waits: dict[int, list[int]] = {}
        level, seen = [pid], 1
        for _ in range(WAITED_DEPTH):
            nxt: list[int] = []
            for p in level:
                kids = _waited_children(p, calls.get(p))[: max(0, MAX_WAITED - seen)]
                if kids:
                    waits[p] = kids
                    seen += len(kids)
                    nxt.extend(k for k in kids if k not in job)
            for k in nxt:
                calls[k] = _blocked_call(k)
            level = nxt
        return cls(calls, waits, _look([p for p in calls if p not in job]))

    def kids(self, pid: int) -> list[int]:
        return self.waits.get(pid, [])


def _children(pid: int) -> list[int]:
    """``pid``'s children, from ``/proc/PID/task/*/children`` (every thread's)."""
    out: list[int] = []
    try:
        tasks = os.listdir(proc.PROC / str(pid) / "task")
    except OSError:
        return []
    for tid in tasks:
        out.extend(int(k) for k in (proc.read_text(proc.PROC / str(pid) / "task" / tid / "children") or "").split())
    return sorted(set(out))


def _waited_children(pid: int, call: BlockedCall | None) -> list[int]:
    """The children a process's main thread waits for with no timeout (wait4, waitid): the one it names when that is
    a child of it (in this pid namespace), or every child of it. [] when it waits for no child."""
    if call is None or call.name not in ("wait4", "waitid") or call.timeout is not False:
        return []
    kids = _children(pid)
    if call.child is not None:
        return [call.child] if call.child in kids else []
    return kids


CALL_READS = 3  # an outside holder's call is read up to this often, CALL_READ_GAP_S apart, while it runs
CALL_READ_GAP_S = 0.01


def _blocked_call(pid: int) -> BlockedCall | None:
    """The call an outside holder's main thread waits in. One caught running (woken by its own timer between two
    sleeps of a polling loop) is read again, a few times, before it is taken for one that waits on nothing known."""
    for i in range(CALL_READS):
        call = read_blocked_call(pid, pid)
        if call is not None or not _running(pid):
            return call
        if i + 1 < CALL_READS:
            time.sleep(CALL_READ_GAP_S)
    return None


def _running(pid: int) -> bool:
    """Whether ``pid``'s main thread runs (or waits for a CPU) now: its /proc/PID/syscall says ``running``."""
    return (proc.read_text(proc.PROC / str(pid) / "syscall") or "").startswith("running")


def job_frames(samples: list[ProcessSample], pid: int) -> tuple[Frame, ...]:
    """The newest main-thread stack of a job process (already read by the capture)."""
    for s in reversed(samples):
        main = next((t for t in s.threads if t.tid == pid), None)
        if main is not None and main.frames:
            return main.frames
    return ()
