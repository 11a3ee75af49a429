"""Capture a job: several samples of every process's state and stacks across a window.

Rules need change, not a snapshot: CPU and I/O deltas, whether a thread's stack moved, whether
the log grew. So we sample at least twice, re-discovering the tree each time (workers come and go).
"""

from __future__ import annotations

import linecache
import os
import time
from collections.abc import Callable
from dataclasses import field, replace
from pathlib import Path

import psutil

from hangwatch import signatures as sg
from hangwatch.capture import proc, roles
from hangwatch.capture.c10d import read_c10d
from hangwatch.capture.enrich import (
    files_written,
    gpu_and_kernel,
    gpu_sampler,
    mark_ranks,
    with_flight,
    with_loader_tasks,
)
from hangwatch.capture.holders import holder
from hangwatch.capture.loader import task_from_locals
from hangwatch.capture.locals import locals_pass
from hangwatch.capture.maps import heap_sharers
from hangwatch.capture.native import explains_nothing, read_native
from hangwatch.capture.rearm import daemon_threads, exit_timers, rearming_timers
from hangwatch.capture.rendezvous import read_rendezvous, waiting_at_setup
from hangwatch.capture.source import held_locks
from hangwatch.capture.stacks import StackResult, dump_stacks, find_py_spy, resume_if_stopped
from hangwatch.capture.syscalls import BlockedCall, SocketTable, SocketTables, describe_fd, read_blocked_call
from hangwatch.capture.waits import read_waits
from hangwatch.errors import CaptureError
from hangwatch.records.evidence import (
    MP_VALUE,
    Evidence,
    Frame,
    LocalsRead,
    LockHolder,
    NativeStack,
    ProcessEvidence,
    ProcessInfo,
    ProcessSample,
    Role,
    ThreadSample,
)
from hangwatch.records.values import mutable
from hangwatch.redact import redact_text

OUTPUT_TAIL_BYTES = 64 * 1024
MIN_SAMPLES, MAX_SAMPLES = 2, 8
SAMPLES_PER_SECOND = 2
STACK_TIMEOUT_S = float(os.environ.get("HANGWATCH_STACK_TIMEOUT_S", "8"))  # per stack read of a sample


def sample_count(window_s: float) -> int:
    """Two samples a second, at least two, at most eight: enough that a loop moving between a few
    functions is seen moving, cheap enough (one sample of 9 processes costs ~50 ms)."""
    return max(MIN_SAMPLES, min(MAX_SAMPLES, round(window_s * SAMPLES_PER_SECOND) + 1))


class _Task:
    __slots__ = ("call", "comm", "fd_target", "state", "switches", "ticks", "tid", "wchan")

    def __init__(self, tid: int, comm: str, state: str, ticks: int, wchan: str | None, switches: int | None) -> None:
        self.tid, self.comm, self.state, self.ticks, self.wchan = tid, comm, state, ticks, wchan
        self.switches = switches
        self.call = BlockedCall("")  # the blocking call of a sleeping thread (syscalls.py); no name: none read
        self.fd_target: str | None = None


def _blocked_calls(pid: int, tasks: list[_Task], tables: SocketTables) -> None:
    """Fill syscall/fd_target for sleeping threads (cheap: only S/D threads, sockets read lazily,
    once per network namespace per sample)."""
    sockets: SocketTable | None = None
    for t in tasks:
        if t.state not in ("S", "D"):
            continue
        call = read_blocked_call(pid, t.tid)
        if call is None:
            continue
        t.call = call
        if call.fd is not None:
            sockets = sockets or tables.for_pid(pid)
            t.fd_target = describe_fd(pid, call.fd, sockets)


def _tasks(pid: int) -> list[_Task]:
    out: list[_Task] = []
    try:
        tids = [int(t) for t in os.listdir(proc.PROC / str(pid) / "task")]
    except OSError:
        return out
    for tid in sorted(tids):
        base = proc.PROC / str(pid) / "task" / str(tid)
        st = proc.read_stat(base / "stat")
        if st is None:
            continue
        wchan = proc.read_text(base / "wchan")
        out.append(
            _Task(
                tid,
                st.comm,
                st.state,
                st.utime + st.stime,
                wchan if wchan and wchan != "0" else None,
                proc.read_ctx_switches(base / "status"),
            )
        )
    return out


def _info(pid: int, root: int, main: int, orphan: bool, infos: dict[int, ProcessInfo]) -> ProcessInfo | None:
    st = proc.read_stat(proc.PROC / str(pid) / "stat")
    if st is None:
        return None
    cmdline = proc.read_cmdline(pid)
    env = proc.read_environ(pid)
    parent_env = proc.read_environ(st.ppid) if st.ppid > 1 else {}
    exe = proc.exe_of(pid)
    tasks = _tasks(pid)
    role = roles.assign_role(pid, root, main, st.comm, cmdline, env, parent_env, orphan, [t.comm for t in tasks])
    stdout, stderr = proc.fd_target(pid, 1), proc.fd_target(pid, 2)
    parent = infos.get(st.ppid)
    forked = parent is not None and parent.cmdline == cmdline and parent.exe == exe
    signals = proc.read_signals(pid)
    try:
        create_time = psutil.Process(pid).create_time()
    except psutil.Error:
        create_time = 0.0  # gone meanwhile: the value is only informative
    rank = (
        proc.int_or_none(env.get("RANK"))
        if role in (Role.RANK, Role.DATALOADER_WORKER, Role.ORPHAN, Role.CHILD, Role.MAIN)
        else None
    )
    return ProcessInfo(
        pid=pid,
        ppid=st.ppid,
        pgid=st.pgid,
        sid=st.sid,
        name=st.comm,
        cmdline=cmdline,
        exe=exe,
        is_python=st.state != "Z" and proc.looks_like_python(pid, exe),
        role=role,
        rank=rank,
        local_rank=proc.int_or_none(env.get("LOCAL_RANK")),
        world_size=proc.int_or_none(env.get("WORLD_SIZE")),
        create_time=create_time,
        stdout=stdout,
        stderr=stderr,
        stdin=proc.fd_target(pid, 0),
        stdout_is_file=proc.file_size(stdout) is not None,
        env=env,
        forked_from_parent=forked,
        caught_signals=signals[0],
        timer_signals=signals[1],
    )


def _state_sample(
    pid: int, at: float, clock_ticks: int, stdout: str | None, tables: SocketTables
) -> tuple[ProcessSample, list[_Task]] | None:
    st = proc.read_stat(proc.PROC / str(pid) / "stat")
    if st is None:
        return None
    tasks = _tasks(pid)
    _blocked_calls(pid, tasks, tables)
    io = proc.read_io(pid, tuple(t.tid for t in tasks if t.comm in proc.SERVING_THREADS))
    statm = proc.read_text(proc.PROC / str(pid) / "statm")
    rss = int(statm.split()[1]) * os.sysconf("SC_PAGE_SIZE") if statm else None
    sample = ProcessSample(
        at=at,
        state=st.state,
        cpu_seconds=(st.utime + st.stime) / clock_ticks,
        rss_bytes=rss,
        read_bytes=io.get("read_bytes"),
        write_bytes=io.get("write_bytes"),
        rchar=io.get("rchar"),
        wchar=io.get("wchar"),
        num_threads=st.num_threads,
        threads=(),
        stdout_size=proc.file_size(stdout),
        syscalls=_syscalls_of(io),
        exit_status=st.exit_code if st.state.startswith("Z") else None,
        tracer=proc.tracer_of(pid) if st.state == "t" else None,
        reaped_cpu=st.reaped_ticks / clock_ticks,
    )
    return sample, tasks


def _merge(sample: ProcessSample, tasks: list[_Task], stacks: StackResult | None) -> ProcessSample:
    by_tid = {t.tid: t for t in stacks.threads} if stacks and stacks.threads else {}
    threads = []
    for t in tasks:
        py = by_tid.get(t.tid)
        frames = py.frames if py else ()
        threads.append(
            ThreadSample(
                tid=t.tid,
                name=(py.name if py and py.name else t.comm),
                state=t.state,
                wchan=t.wchan,
                cpu_ticks=t.ticks,
                active=py.active if py else None,
                owns_gil=py.owns_gil if py else None,
                frames=frames,
                syscall=t.call.name or None,
                fd_target=t.fd_target,
                ctx_switches=t.switches,
                fd=t.call.fd,
                timeout=t.call.timeout,
                futex=t.call.futex,
                shared_futex=t.call.shared,
                wakes_in=t.call.wakes_in,
                wait_max=t.call.wait_max,
                wait_child=t.call.child,
                signals=t.call.signals,
                read_stopped=stacks.stopped if py is not None and stacks is not None else None,
            )
        )
    error = stacks.error if stacks else None
    return replace(sample, threads=tuple(threads), stack_error=error)


MAX_RENDEZVOUS_READS = 2  # processes waiting at process-group setup whose store is read


def _with_code(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    return tuple(
        replace(
            f,
            code=(linecache.getline(f.file, f.line).strip() or None),
            holds=held_locks(f.file, f.line) if sg.is_user(f) else (),
        )
        if f.file.startswith("/")
        else f
        for f in frames
    )


def _annotate_code(samples: list[ProcessSample]) -> tuple[ProcessSample, ...]:
    return tuple(replace(s, threads=tuple(replace(t, frames=_with_code(t.frames)) for t in s.threads)) for s in samples)


def _output_tail(info: ProcessInfo) -> str | None:
    for target in (info.stderr, info.stdout):
        if proc.file_size(target) is None or target is None:
            continue
        try:
            with open(target, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - OUTPUT_TAIL_BYTES))
                return redact_text(f.read().decode(errors="replace"))
        except OSError:
            continue
    return None


def _syscalls_of(io: dict[str, int]) -> int | None:
    return io["syscr"] + io["syscw"] if "syscr" in io and "syscw" in io else None


def _syscalls(pid: int, tasks: list[_Task]) -> int | None:
    return _syscalls_of(proc.read_io(pid, tuple(t.tid for t in tasks if t.comm in proc.SERVING_THREADS)))


# After a stack read, how long to wait at most for the threads that slept before it to sleep again. ptrace's stop
# wakes a blocked thread; it goes back to its wait when the scheduler next runs it, and that switch is ptrace's, not
# the thread's. On a crowded machine that can come after the count is read, and three such switches in a 3 s window
# made a prompt nobody answers look like a thread that wakes again and again (slow instead of hung: 1 CI run of 3;
# 1-2 such switches a window measured with the target under SCHED_IDLE beside 4 busy loops, 0 with this wait).
SETTLE_S = 0.05
SLEEPING = ("S", "D")


def _switches_now(
    taken: dict[int, tuple[ProcessSample, list[_Task]]],
    stopped: set[int],
    settle_s: float = SETTLE_S,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[tuple[int, int], int]:
    """Per (pid, tid) context switches, and per (pid, 0) read/write syscalls, right after a stack read: once each
    thread that slept before the read sleeps again (at most ``settle_s`` in all), in the processes the read stopped
    (``stopped``: a blocking attach; ``--nonblocking`` and no read stop nothing). A thread that has not slept again
    by then is counted one switch ahead: the one it makes going back to sleep."""
    deadline = time.monotonic() + settle_s
    waking = {(p, t.tid) for p, (_, tasks) in taken.items() if p in stopped for t in tasks if t.state in SLEEPING}
    while waking:
        waking = {(p, tid) for p, tid in waking if _state(p, tid) not in (*SLEEPING, None)}
        if not waking or time.monotonic() >= deadline:
            break
        sleep(0.002)
    out = {}
    for p, (_, tasks) in taken.items():
        n = _syscalls(p, tasks)
        if n is not None:
            out[(p, 0)] = n
        for t in tasks:
            n = proc.read_ctx_switches(proc.PROC / str(p) / "task" / str(t.tid) / "status")
            if n is not None:
                out[(p, t.tid)] = n + ((p, t.tid) in waking)
    return out


def _state(pid: int, tid: int) -> str | None:
    st = proc.read_stat(proc.PROC / str(pid) / "task" / str(tid) / "stat")
    return st.state if st is not None else None


def _read_counting_switches(
    taken: dict[int, tuple[ProcessSample, list[_Task]]],
    infos: dict[int, ProcessInfo],
    py_spy: str | None,
    timeout_s: float,
    after_read: dict[tuple[int, int], int],
    quiet: dict[tuple[int, int], int],
) -> tuple[dict[int, StackResult], dict[tuple[int, int], int]]:
    """This sample's stack reads, its switches counted into the quiet totals first; and where the next count of each
    thread starts: after the read where it stopped the process, before it where it stopped nothing."""
    counted = _raw_counts(taken)  # before they become quiet totals
    _count_quiet_switches(taken, after_read, quiet)
    stacks = _read_stacks(taken, infos, py_spy, timeout_s)
    stopped = {p for p, r in stacks.items() if r.stopped}
    starts = _switches_now(taken, stopped)
    starts.update({k: n for k, n in counted.items() if k[0] not in stopped})
    return stacks, starts


def _raw_counts(taken: dict[int, tuple[ProcessSample, list[_Task]]]) -> dict[tuple[int, int], int]:
    """Per (pid, tid) context switches and per (pid, 0) syscalls as this sample read them. A read without a stop wakes
    nobody: the switches a thread makes while it lasts are its own (a sleep loop's wake-ups), so the next count of
    such a process starts here, not after the read (a slow read on a loaded machine hid a healthy sleep loop's
    wake-ups, and nothing seemed to move)."""
    out: dict[tuple[int, int], int] = {}
    for p, (sample, tasks) in taken.items():
        if sample.syscalls is not None:
            out[(p, 0)] = sample.syscalls
        out.update({(p, t.tid): t.switches for t in tasks if t.switches is not None})
    return out


def _count_quiet_switches(
    taken: dict[int, tuple[ProcessSample, list[_Task]]],
    after_read: dict[tuple[int, int], int],
    quiet: dict[tuple[int, int], int],
) -> None:
    """Add the switches since the last stack read to each thread's quiet total, and store that total
    as the thread's count: ptrace's own stops never count as the thread waking."""
    for p, (sample, tasks) in list(taken.items()):
        for t in tasks:
            key = (p, t.tid)
            if t.switches is not None and key in after_read:
                quiet[key] = quiet.get(key, 0) + max(0, t.switches - after_read[key])
            t.switches = quiet.setdefault(key, 0) if t.switches is not None else None
        key = (p, 0)
        if sample.syscalls is not None and key in after_read:
            quiet[key] = quiet.get(key, 0) + max(0, sample.syscalls - after_read[key])
        taken[p] = (replace(sample, syscalls=quiet.setdefault(key, 0) if sample.syscalls is not None else None), tasks)


def _read_stacks(
    taken: dict[int, tuple[ProcessSample, list[_Task]]],
    infos: dict[int, ProcessInfo],
    py_spy: str | None,
    timeout_s: float,
) -> dict[int, StackResult]:
    """One stack read of each living Python process; each is stopped for it only where that is safe
    (``stacks.why_not_stop``), and none is left stopped."""
    targets = dict.fromkeys((p for p, (s, _) in taken.items() if infos[p].is_python and s.state != "Z"), False)
    if not py_spy or not targets:
        return {}
    stacks = dump_stacks(targets, py_spy, timeout_s)
    resume_if_stopped({p: taken[p][0].state for p in targets})
    return stacks


def _span_whole(firsts: list[float], window_s: float, sleep: Callable[[float], None]) -> None:
    """Before the last round: wait until the window has passed since ``firsts``, the first samples of the processes
    seen from the first round, so that a window of W seconds is W seconds of each of them. The first round reads
    each new process's command line and environment before its state, so its samples came later in their round
    than the last round's do: the rounds' schedule alone made a 1-s window span 0.99 s on an idle machine, and a
    wait a 1-s bound asks to be seen that long was not seen so. The wait is the first round's own length, at most."""
    lag = max(firsts) + window_s - time.time() if firsts else 0.0
    if lag > 0:
        sleep(min(lag, window_s))


@mutable
class _Rounds:
    """What the rounds of one capture gathered so far: each process's identity and samples, those gone since, and
    what the stack reads carry from one round to the next."""

    root: int
    clock_ticks: int
    py_spy: str | None
    stack_timeout_s: float
    infos: dict[int, ProcessInfo] = field(default_factory=dict)
    series: dict[int, list[ProcessSample]] = field(default_factory=dict)
    gone: set[int] = field(default_factory=set)
    main: int | None = None
    after_read: dict[tuple[int, int], int] = field(default_factory=dict)  # (pid, tid) -> switches after a read
    quiet: dict[tuple[int, int], int] = field(default_factory=dict)  # (pid, tid) -> switches between reads
    unstopped: set[str] = field(default_factory=set)  # why a process was read without a stop (a write cut short)

    def take(self) -> None:
        """One round: the job's processes now, each one's state, then their stacks."""
        members = proc.job_members(self.root)
        if self.main is None:
            self.main = proc.main_pid_of(self.root, members)
        taken: dict[int, tuple[ProcessSample, list[_Task]]] = {}
        tables = SocketTables()
        for m in members:
            if m.pid not in self.infos:
                info = _info(m.pid, self.root, self.main, m.orphan, self.infos)
                if info is None:
                    continue
                self.infos[m.pid] = info
            got = _state_sample(m.pid, time.time(), self.clock_ticks, self.infos[m.pid].stdout, tables)
            if got is not None:
                taken[m.pid] = got
        self.gone |= {p for p in self.series if p not in taken}
        stacks, self.after_read = _read_counting_switches(
            taken, self.infos, self.py_spy, self.stack_timeout_s, self.after_read, self.quiet
        )
        self.unstopped |= {
            f"pid {p} was read without stopping it: {r.unstopped}" for p, r in stacks.items() if r.unstopped
        }
        for p, (sample, tasks) in taken.items():
            self.series.setdefault(p, []).append(_merge(sample, tasks, stacks.get(p)))


def capture_job(
    pid: int,
    window_s: float = 5.0,
    samples: int | None = None,
    stack_timeout_s: float = STACK_TIMEOUT_S,
    sleep: Callable[[float], None] = time.sleep,
    native: bool | None = None,
    gpu: bool = True,
    kernel: bool = True,
    flight: bool = True,
) -> Evidence:
    """Sample the job that ``pid`` belongs to for ``window_s`` seconds.

    ``native``: True reads native frames of every Python process once; None (the default) only of
    processes whose Python stack explains nothing; False never. ``gpu``: read the GPUs over the window
    (where there are any); ``kernel``: the kernel log since the job started (where permitted; the
    supervisor reads it itself, from the attempt's launch on).

    Raises CaptureError when nothing at all could be captured (no such process, or it vanished).
    Partial evidence (no stacks, processes exiting mid-window) is returned with ``notes``.
    """
    if not Path(f"/proc/{pid}").exists():
        raise CaptureError(f"no process with pid {pid}", "Check the PID with `ps -ef` and try again")
    clock_ticks = os.sysconf("SC_CLK_TCK")
    py_spy = find_py_spy()
    notes: list[str] = []
    if py_spy is None:
        notes.append("py-spy is not installed, so no Python stacks were read: `pip install py-spy`")
    root = proc.find_root(pid)
    sampler = gpu_sampler(notes) if gpu else None
    n = samples or sample_count(window_s)
    interval = window_s / (n - 1) if n > 1 else 0.0
    started = time.time()
    t0 = time.monotonic()
    rounds = _Rounds(root, clock_ticks, py_spy, stack_timeout_s)
    for i in range(n):
        wait = t0 + i * interval - time.monotonic()
        if wait > 0:
            sleep(wait)
        if i == n - 1 and i > 0:  # the processes sampled in every round so far: seen from the first
            _span_whole([ss[0].at for ss in rounds.series.values() if len(ss) == i], window_s, sleep)
        rounds.take()
    infos, series = rounds.infos, rounds.series
    if not series:
        raise CaptureError(
            f"pid {pid} exited before anything could be captured", "Run inspect while the job is still running"
        )
    notes.extend(mark_ranks(infos, series, py_spy))
    stack_errors = sorted({s.stack_error for ss in series.values() for s in ss if s.stack_error})
    notes.extend([*stack_errors, *sorted(rounds.unstopped)])
    gpu_ev, events = gpu_and_kernel(sampler, series, infos, started, notes, kernel)
    processes = _processes(series, infos, rounds.gone, root, py_spy, clock_ticks, notes, native)
    processes = with_loader_tasks(with_flight(processes, notes) if flight else processes)
    return Evidence(
        target_pid=pid,
        root_pid=root,
        started_at=started,
        ended_at=started + (time.monotonic() - t0),
        clock_ticks=clock_ticks,
        cpu_count=os.cpu_count() or 1,
        processes=processes,
        notes=tuple(notes),
        gpu=gpu_ev,
        kernel=events,
    )


def _processes(
    series: dict[int, list[ProcessSample]],
    infos: dict[int, ProcessInfo],
    gone: set[int],
    root: int,
    py_spy: str | None,
    clock_ticks: int,
    notes: list[str],
    native: bool | None,
) -> tuple[ProcessEvidence, ...]:
    """Every process's evidence, root first; threads that spun get the locals pass; processes whose
    Python stack explains nothing (or all, with ``native``) get the native pass."""
    stacks: dict[int, tuple[NativeStack, ...]] = {}
    wanted = (
        []
        if native is False or not py_spy
        else [
            p
            for p, ss in series.items()
            if p not in gone and infos[p].is_python and (native or explains_nothing(infos[p], ss, clock_ticks))
        ]
    )
    if py_spy and wanted:
        stacks, native_notes = read_native(wanted, py_spy)
        notes.extend(native_notes)
    local_reads, batches = locals_pass(series, infos, gone, py_spy, clock_ticks, notes)
    waiting = sorted(p for p, ss in series.items() if p not in gone and waiting_at_setup(ss))
    # One locals read each, one after another (3 s at most): the diagnosis quotes the first waiters only.
    rendezvous = {p: read_rendezvous(infos[p], py_spy) for p in waiting[:MAX_RENDEZVOUS_READS]}
    c10d, c10d_notes = read_c10d(series, infos, gone, py_spy)
    notes.extend(c10d_notes)
    annotated = {p: _annotate_code(ss) for p, ss in series.items()}
    waits = read_waits({p: list(ss) for p, ss in annotated.items()}, infos, gone, py_spy)
    tracers = _tracers(series, gone, py_spy)
    return tuple(
        ProcessEvidence(
            info=infos[p],
            samples=annotated[p],
            exited=p in gone,
            output_tail=_output_tail(infos[p]) if infos[p].role in (Role.MAIN, Role.RANK, Role.LAUNCHER) else None,
            locals=local_reads.get(p, ()),
            native=stacks.get(p, ()),
            rendezvous=rendezvous.get(p),
            waits=waits.get(p, ()),
            writing=files_written(p, series[p], p in gone),
            c10d=c10d.get(p),
            rearms=rearming_timers(infos[p], annotated[p]) if p not in gone else (),
            daemons=daemon_threads(infos[p], annotated[p]) if p not in gone else (),
            exit_timers=exit_timers(infos[p], annotated[p]) if p not in gone else (),
            heap_sharers=heap_sharers(p) if p not in gone and _reads_a_value(local_reads.get(p, ())) else None,
            loader_task=(
                task_from_locals(p, batches[p]) if p in batches and infos[p].role == Role.DATALOADER_WORKER else None
            ),
            tracer=tracers.get(p),
        )
        for p in sorted(series, key=lambda p: (p != root, p))
    )


def _reads_a_value(reads: tuple[LocalsRead, ...]) -> bool:
    return any(r.flag == MP_VALUE for r in reads)


def _tracers(series: dict[int, list[ProcessSample]], gone: set[int], py_spy: str | None) -> dict[int, LockHolder]:
    """The tracer of each process in a tracing stop (t) in every sample at no CPU (a debugger's pause; strace's at each
    call is passing, and its tracee runs between), read as an outside holder is, once however many it traces: what
    it does decides whether the stop ends."""
    held: dict[int, list[int]] = {}
    for p, ss in series.items():
        tracer = ss[-1].tracer
        still = ss[-1].cpu_seconds == ss[0].cpu_seconds
        if p not in gone and len(ss) >= 2 and tracer is not None and still and all(s.state == "t" for s in ss):
            held.setdefault(tracer, []).append(p)
    out: dict[int, LockHolder] = {}
    for tracer, pids in held.items():
        how = f"traces pid {', '.join(map(str, pids))}, in a tracing stop in every sample: it runs when continued"
        h = holder(tracer, series, py_spy, time.time(), how, None, frames=())
        out.update(dict.fromkeys(pids, h))
    return out
