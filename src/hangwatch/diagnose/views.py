"""Derived facts about captured processes that several rules need (CPU %, stack movement, ...).

Pure functions of evidence: no I/O. A ``ProcessView`` is built once per process per diagnosis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

from hangwatch import signatures as sg
from hangwatch.capture.roles import is_mp_helper
from hangwatch.records.evidence import Evidence, Frame, LocalsRead, ProcessEvidence, ProcessInfo, Role, ThreadSample
from hangwatch.records.incident import Where
from hangwatch.records.values import frozen

BUSY_CPU_PERCENT = 30.0  # a thread above this share of one core is "spinning" (2 cores, contention)
IDLE_CPU_PERCENT = 5.0
TIMED_WAIT_MIN_S = 1.0  # a wait with a timeout is said to stay only when seen in it at least this long
# (--min-stall 5 captures for 1.25 s: a worker asleep for ever is seen over about that)
MIN_WINDOW_S = 0.2  # a thread is said to stay in a call only when seen in it over at least this long
# A thread blocked in one call does not wake; one in a sleep or retry loop wakes at every turn. A
# DataLoader or queue poll with a 5 s timeout wakes once in a window; a 1 s backoff loop, every second.
WAKEUPS_MIN = 3
WAKEUPS_PER_S = 0.9
SYSCALLS_MIN = 3  # read/write system calls in the window that mean a process is moving data
MOVING_BYTES = 64 * 1024  # bytes read or written in the window that mean a process is moving data
DISK_BYTES = 1 << 20  # storage bytes in the window that mean it is (a slow disk or NFS server moves less)


def innermost_user(frames: Sequence[Frame]) -> Frame | None:
    """The innermost frame of user code, the process's own frames only."""
    return next((f for f in sg.own_frames(frames) if sg.is_user(f)), None)


def innermost_explaining(frames: Sequence[Frame]) -> Frame | None:
    """The innermost user frame; else the innermost non-stdlib frame; else the innermost frame."""
    return (
        innermost_user(frames)
        or next((f for f in frames if not sg.is_stdlib_file(f.file)), None)
        or (frames[0] if frames else None)
    )


def describe(frame: Frame | None) -> str:
    """``function (file.py:line)`` for evidence texts."""
    if frame is None:
        return "no Python frame"
    return f"{frame.function} ({frame.file.rsplit('/', 1)[-1]}:{frame.line})"


def described(frame: Frame | None) -> str:
    """``describe(frame)`` and the line's code: ``main (train.py:12) `lock.acquire()```."""
    return describe(frame) + (f" `{frame.code}`" if frame is not None and frame.code else "")


@frozen
class ThreadView:
    """One thread across the samples of a capture."""

    tid: int
    samples: tuple[ThreadSample, ...]  # this thread in each process sample where it existed
    duration_s: float  # from its first sample to its last: its own part of the window
    clock_ticks: int
    timer_bound_s: float = sg.LONG_TIMER_S  # a wait's timeout ending later than this is past every bound of the job
    whole: bool = True  # seen in the window's first sample: a thread started during the look was not there throughout
    seen_at: tuple[float, ...] = ()  # when each of its samples was taken (empty where not said)

    @property
    def last(self) -> ThreadSample:
        """The newest sample of this thread."""
        return self.samples[-1]

    @cached_property
    def waiting(self) -> ThreadSample:
        """The newest sample that caught it not running: one that caught it running (under load, woken from its wait
        and waiting for a CPU, between two polls or sleeps) says nothing against that wait."""
        return next((s for s in reversed(self.samples) if s.state != "R"), self.last)

    @cached_property
    def frames(self) -> tuple[Frame, ...]:
        """The newest stack read: one sample's read can fail (busy target) while others succeed."""
        return next((s.frames for s in reversed(self.samples) if s.frames), ())

    @property
    def name(self) -> str:
        """The thread's name."""
        return self.last.name

    @property
    def has_stack(self) -> bool:
        """Whether any sample read a Python stack."""
        return bool(self.frames)

    @cached_property
    def cpu_percent(self) -> float | None:
        """CPU use of the thread over the window, in percent of one core."""
        first, last = self.samples[0].cpu_ticks, self.samples[-1].cpu_ticks
        if first is None or last is None or self.duration_s <= 0:
            return None
        return 100.0 * (last - first) / self.clock_ticks / self.duration_s

    @property
    def busy(self) -> bool:
        """Above BUSY_CPU_PERCENT of a core; or runnable (R) in every sample and not idle: a thread that wants the
        CPU all the time and gets less of it on a crowded machine is as busy as it can be."""
        cpu = self.cpu_percent or 0.0
        return cpu >= BUSY_CPU_PERCENT or (
            cpu > IDLE_CPU_PERCENT and len(self.samples) >= 2 and all(s.state == "R" for s in self.samples)
        )

    @property
    def stacks(self) -> list[tuple[Frame, ...]]:
        """Every stack that was read, oldest first."""
        return [s.frames for s in self.samples if s.frames]

    @cached_property
    def stack_changed(self) -> bool:
        """Any difference (function, file or line) between the stacks of two samples. A running thread read without a
        stop (``ThreadSample.read_stopped``) may be read torn (bench/unstopped.py), which can only add differences:
        it may make a spin look like work (named later, at --max-slow), never work look like a spin."""
        keys = {tuple((f.function, f.file, f.line) for f in st) for st in self.stacks}
        return len(keys) > 1

    @cached_property
    def sleep_left(self) -> float | None:
        """What is left of the sleep it is in (nanosleep, clock_nanosleep), by the kernel's timer: the newest sample's
        reading; or, where a stack read stopped the sleep and the kernel resumed it (``restart_syscall``: the call no
        longer readable, its deadline kept), an earlier sample's reading of the same sleep less the time since, the
        thread not switched out once since then and its stack the same. None where no sample read one."""
        if self.last.syscall in sg.SLEEP_SYSCALLS:
            return self.last.wakes_in
        if len(self.seen_at) != len(self.samples) or self.last.syscall is not None:
            return None
        i = next((i for i in range(len(self.samples) - 1, -1, -1) if self.samples[i].syscall is not None), -1)
        read = self.samples[i]
        if i < 0 or read.syscall not in sg.SLEEP_SYSCALLS or read.wakes_in is None:
            return None
        for later in self.samples[i + 1 :]:
            if later.state != "S" or later.ctx_switches is None or later.ctx_switches != read.ctx_switches:
                return None  # it ran, or was not read: another sleep may have begun
            if later.frames and read.frames and later.frames != read.frames:
                return None
        return read.wakes_in - (self.seen_at[-1] - self.seen_at[i])

    @cached_property
    def wakeups(self) -> int | None:
        """Context switches over the window (None where unreadable)."""
        first, last = self.samples[0].ctx_switches, self.samples[-1].ctx_switches
        return None if first is None or last is None else last - first

    @cached_property
    def woke_often(self) -> bool:
        """Woke again and again in the window: in a sleep, poll or retry loop, not stuck in one call."""
        w = self.wakeups
        return w is not None and w >= WAKEUPS_MIN and w >= WAKEUPS_PER_S * max(self.duration_s, 1e-9)

    @cached_property
    def idle_throughout(self) -> bool:
        """Idle in every sample, and the stack never changed."""
        return all(s.active is False for s in self.samples if s.frames) and not self.stack_changed

    @cached_property
    def blocked(self) -> bool:
        """Blocked in one call for the whole window: idle in every sample with its stack unchanged, never
        woken, at no CPU. ("stuck" is said of a thread only when this, or ``spinning``, holds.)"""
        return (
            self.has_stack
            and self.measured
            and self.idle_throughout
            and not self.woke_often
            and ((self.cpu_percent or 0.0) <= IDLE_CPU_PERCENT)
        )

    @property
    def measured(self) -> bool:
        """Seen in two samples at least 0.2 s apart (inspect's shortest window): one sample (a capture cut
        short on a loaded machine) says where a thread is, never that it stayed there. A thread started during the
        look never stayed anywhere for the whole window (a Timer re-armed every 0.5 s, read in a wait whose timeout
        was not read, is not blocked)."""
        if not self.whole:
            return False
        if self.last.timeout is True and (self.duration_s < TIMED_WAIT_MIN_S or self.wakeups is None):
            return False  # a timed wait (a sleep) seen briefly, or with its wake-ups unread: it may end at any time
        return len(self.samples) >= 2 and self.duration_s >= MIN_WINDOW_S

    @cached_property
    def parked(self) -> bool:
        """The kernel's view alone: asleep in a wait with no timeout for the whole window, never woken, at no
        CPU. Said of any thread, Python or not (a native pool thread, torch's own). Not of one in sigwait(): it acts
        when its signal comes (a cleanup thread waiting for SIGTERM)."""
        return (
            self.last.timeout is False
            and self.last.syscall != "sigwait"
            and self.last.state in ("S", "D")
            and (self.wakeups or 0) == 0
            and ((self.cpu_percent or 0.0) <= IDLE_CPU_PERCENT)
        )

    @property
    def waits_forever(self) -> bool:
        """The kernel says its blocking call has no timeout (a futex, poll or lock wait with none), or a futex wait's
        timeout that ends past every bound of the job (``Event.wait(86400)``: only another thread could end it)."""
        return self.last.timeout is False or self._timeout_past_bounds

    @property
    def _timeout_past_bounds(self) -> bool:
        """A futex wait whose timeout ends past the bounds, read so in every sample of it (two at least: one read
        could catch a thread between its call and its memory)."""
        futex = [s for s in self.samples if s.syscall == "futex" and s.timeout is True]
        return (
            self.last.syscall == "futex"
            and len(futex) >= 2
            and all(s.wakes_in is not None and s.wakes_in >= self.timer_bound_s for s in futex)
        )

    @property
    def wait_text(self) -> str:
        """The blocking call as the kernel shows it: ``futex wait with no timeout``."""
        call = f"{self.last.syscall} wait" if self.last.syscall else "wait"
        call = "read of a signalfd" if self.last.syscall == "sigwait" and self.last.fd is not None else call
        if self._timeout_past_bounds:
            return f"{call} whose timeout ends in {duration_text(self.last.wakes_in or 0.0)}, past the job's bounds"
        return f"{call} with no timeout" if self.last.timeout is False else call

    def any_frame(self, test: Callable[[Frame], bool]) -> bool:
        """``test`` holds for some frame of some sample."""
        return any(test(f) for st in self.stacks for f in st)

    @cached_property
    def user_frame(self) -> Frame | None:
        """The innermost user frame of the newest stack that has one (a read of a busy target can come back
        cut short, deep in a library, with the user's frames missing)."""
        return next((f for st in reversed(self.stacks) if (f := innermost_user(st)) is not None), None)

    @cached_property
    def spinning(self) -> bool:
        """Runs Python at high CPU in the same innermost user function in every sample.

        A pure-Python spin holds the GIL; a training step mostly runs in native ops that release
        it, so GIL ownership separates a stuck loop from long compute.
        """
        stacks = self.stacks
        if len(stacks) < 2 or not self.busy:
            return False
        inner = [st[0] for st in stacks]
        if not all(sg.is_user(f) for f in inner):
            return False
        if len({(f.file, f.function) for f in inner}) != 1:
            return False
        gil = sum(1 for s in self.samples if s.owns_gil)
        active = sum(1 for s in self.samples if s.active)
        return active >= len(self.samples) - 1 and gil * 2 >= len(self.samples)


@frozen
class ProcessView:
    """One process across the samples of a capture."""

    ev: ProcessEvidence
    clock_ticks: int
    timer_bound_s: float = sg.LONG_TIMER_S  # a timer ending later than this is past every bound of the job
    parent: bool = True  # a child of it that may exit by itself was alive at the capture's end (else no SIGCHLD comes)
    alone: bool = False  # no other process of the job was alive at any sample (multiprocessing's helpers aside)

    @property
    def info(self) -> ProcessInfo:
        """What was read of the process once."""
        return self.ev.info

    @property
    def pid(self) -> int:
        """The process id."""
        return self.ev.info.pid

    @property
    def role(self) -> Role:
        """Its role in the job."""
        return self.ev.info.role

    @property
    def duration_s(self) -> float:
        """Seconds between its first and last sample."""
        s = self.ev.samples
        return s[-1].at - s[0].at if len(s) > 1 else 0.0

    @property
    def state(self) -> str:
        """The process state in the newest sample (R, S, D, T, ...)."""
        return self.ev.samples[-1].state

    @property
    def stopped(self) -> bool:
        """Stopped (T, or t: a tracing stop) in every sample, at least two, with no CPU used between them: a stop seen
        once is a moment (strace stops its tracee at each call, a scheduler's slice), never the whole window."""
        s = self.ev.samples
        return len(s) >= 2 and all(x.state in ("T", "t") for x in s) and s[-1].cpu_seconds == s[0].cpu_seconds

    @property
    def ended(self) -> str | None:
        """``... exited during the look`` where it was seen running, then gone or a zombie (exited, its status not
        read yet) by the look's end; None otherwise. A zombie throughout is not said to end here: it may be the
        culprit others wait for (a rank that crashed)."""
        zombie = self.state.startswith("Z") and not self.ev.samples[0].state.startswith("Z")
        return f"{self.label()} exited during the look" if self.ev.exited or zombie else None

    @cached_property
    def cpu_percent(self) -> float | None:
        """CPU use over the window, in percent of one core."""
        s = self.ev.samples
        if len(s) < 2 or self.duration_s <= 0:
            return None
        return 100.0 * (s[-1].cpu_seconds - s[0].cpu_seconds) / self.duration_s

    @cached_property
    def threads(self) -> tuple[ThreadView, ...]:
        """Every thread seen, each across its samples."""
        series: dict[int, list[ThreadSample]] = {}
        seen_at: dict[int, list[float]] = {}
        for s in self.ev.samples:
            for t in s.threads:
                series.setdefault(t.tid, []).append(t)
                seen_at.setdefault(t.tid, []).append(s.at)
        first = self.ev.samples[0].at if self.ev.samples else 0.0
        return tuple(
            ThreadView(
                tid,
                tuple(ts),
                seen_at[tid][-1] - seen_at[tid][0],
                self.clock_ticks,
                self.timer_bound_s,
                whole=seen_at[tid][0] == first,
                seen_at=tuple(seen_at[tid]),
            )
            for tid, ts in series.items()
        )

    @cached_property
    def main_thread(self) -> ThreadView | None:
        """The thread whose tid is the pid (else the first one)."""
        return next((t for t in self.threads if t.tid == self.pid), self.threads[0] if self.threads else None)

    @property
    def has_stacks(self) -> bool:
        """Whether any thread's stack was read."""
        return any(t.has_stack for t in self.threads)

    def delta(self, field: str) -> int | None:
        """How much a counter of the process samples grew over the window (None where unknown)."""
        s = self.ev.samples
        a, b = getattr(s[0], field), getattr(s[-1], field)
        return None if a is None or b is None else b - a

    @cached_property
    def moved_bytes(self) -> int:
        """Bytes read and written in the window (files, sockets, pipes: /proc/PID/io rchar + wchar)."""
        return max(0, (self.delta("rchar") or 0) + (self.delta("wchar") or 0))

    @property
    def disk_bytes(self) -> int:
        """Bytes the process made storage read or write in the window (/proc/PID/io read_bytes + write_bytes)."""
        return max(0, (self.delta("read_bytes") or 0) + (self.delta("write_bytes") or 0))

    @cached_property
    def work(self) -> str | None:
        """A measured fact that the process works, in words, or None: bytes moving, CPU burning while its
        main thread's stack moves, or its output growing. (Loops that walk their data are judged by the
        rules from the locals.)"""
        dur = f"{self.duration_s:.1f} s"
        calls = self.delta("syscalls")
        # One call is no proof: a write() blocked on a full pipe returns what it wrote so far when a stack read
        # interrupts it (64 KiB, once), though the writer never moves on.
        # the kernel adds the counters of a child it waited for to its own: where it reaped one, they may be theirs
        who = self.label() + (" and the children it reaped" if (self.delta("reaped_cpu") or 0) > 0 else "")
        if self.moved_bytes >= MOVING_BYTES and (calls is None or calls >= 2):
            return f"{who} moved {size_text(self.moved_bytes)} in {dur}" + self.writing_text()
        disk = self.disk_bytes
        if disk >= DISK_BYTES:  # a mapped file's page faults and readahead move storage bytes with no read call
            return f"{who} moved {size_text(disk)} to or from storage in {dur}" + self.writing_text()
        t = self.main_thread
        if t is not None and t.stack_changed and (self.cpu_percent or 0.0) > BUSY_CPU_PERCENT:
            return f"{self.label()} used {self.cpu_text()} in {dur} with its stack moving"
        if self.stdout_grew:
            return f"{self.label()} wrote output in {dur}"
        sender = next((t for t in self.threads if sends_as_read(t)), None)
        if sender is not None:
            return (
                f"{self.label()} thread '{sender.name}' was woken {sender.wakeups} times in {dur} inside one "
                f"{sender.last.syscall or 'write'}() call: a blocked writer wakes only when its reader makes room, so "
                "its bytes move"
            )
        return None

    def writing_text(self) -> str:
        """`` (writing weights.bin, now 40 MiB)``: the files it has open for writing, when known."""
        if not self.ev.writing:
            return ""
        shown = ", ".join(f"{path.rsplit('/', 1)[-1]}, now {size_text(size)}" for path, size in self.ev.writing[:2])
        return f" (writing {shown})"

    @cached_property
    def moved_data(self) -> bool:
        """Read/write system calls in the window: the process moves data (sockets, pipes, files)."""
        d = self.delta("syscalls")
        return d is not None and d >= SYSCALLS_MIN

    def locals_of(self, tid: int) -> tuple[LocalsRead, ...]:
        """The second-pass locals reads of a thread, oldest first."""
        return tuple(r for r in self.ev.locals if r.tid == tid)

    def lines_of(self, t: ThreadView) -> list[int]:
        """The lines of ``t``'s innermost user frame over the look: its samples, and the second pass's reads in the
        same function (a burst of them where no locals can be read: a module's top level)."""
        frame = t.user_frame
        lines = {st[0].line for st in t.stacks if st}
        if frame is not None:
            lines |= {r.line for r in self.locals_of(t.tid) if (r.file, r.function) == (frame.file, frame.function)}
        return sorted(lines)

    def stack_moved(self, t: ThreadView) -> bool:
        """``t``'s stack differed between two samples, or its line between the second pass's reads."""
        return t.stack_changed or len(self.lines_of(t)) > 1

    @property
    def stdout_grew(self) -> bool | None:
        """Whether stdout (a file) grew during the window (None where it is not a file)."""
        d = self.delta("stdout_size")
        return None if d is None else d > 0

    def runs_alone(self, t: ThreadView) -> bool:
        """Whether ``t`` is the only thread of this process with a Python stack (library machinery aside):
        nothing else in it could change what ``t`` reads."""
        return not any(
            o.tid != t.tid and o.has_stack and not any(n in o.name for n in sg.INTERNAL_THREAD_NAMES)
            for o in self.threads
        )

    @property
    def user_threads(self) -> list[ThreadView]:
        """Threads running user code that are not the main thread nor library machinery."""
        return [
            t
            for t in self.threads
            if t.tid != self.pid
            and t.has_stack
            and not any(n in t.name for n in sg.INTERNAL_THREAD_NAMES)
            and any(sg.is_user(f) for f in t.frames)
        ]

    def where(self, thread: ThreadView | None, frame: Frame | None) -> Where:
        """A finding's ``where`` for ``frame`` of ``thread`` in this process."""
        tid = thread.tid if thread else None
        if frame is None:
            return Where(self.pid, self.info.rank, tid, None, None, None)
        return Where(self.pid, self.info.rank, tid, frame.file, frame.line, frame.function, frame.code)

    def label(self) -> str:
        """``rank 3 (pid 42)`` or ``dataloader_worker (pid 42)``."""
        if self.role == Role.RANK and self.info.rank is not None:
            return f"rank {self.info.rank} (pid {self.pid})"
        return f"{self.role.value} (pid {self.pid})"

    def cpu_text(self) -> str:
        """``37% CPU`` or ``CPU unknown``."""
        c = self.cpu_percent
        return "CPU unknown" if c is None else f"{c:.0f}% CPU"


def sends_as_read(t: ThreadView) -> bool:
    """The thread sat in one write or send for the window (its stack unchanged, the kernel showing a write-family
    call whenever it slept) and was woken again and again: a writer blocked on a full pipe or socket is woken only
    when the other end takes bytes, so its bytes move, slowly (a checkpoint upload to a slow reader). A writer
    whose reader is stuck is never woken."""
    calls = {s.syscall for s in t.samples if s.state in ("S", "D")}
    return (
        len(t.samples) >= 2
        and bool(calls)
        and calls <= sg.WRITE_SYSCALLS
        and not t.stack_changed
        and (t.wakeups or 0) >= WAKEUPS_MIN
    )


def size_text(n: int) -> str:
    """``40 MiB``, ``640 KiB``, ``512 B``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}" if n < 10 * scale else f"{n / scale:.0f} {unit}"
    return f"{n} B"


def bound_text(bound_s: float) -> str:
    """Why a timer that ends after ``bound_s`` is past the job's bounds, in words."""
    if bound_s >= sg.LONG_TIMER_S:
        return "after every bound hangwatch keeps"
    return f"after --max-slow ({duration_text(bound_s)}), the most a job without progress is given"


def duration_text(seconds: float) -> str:
    """``31.7 years``, ``2.0 days``, ``3.0 h``: a long timer in words (a timer due within the second: "under a
    second", not "0 s")."""
    if seconds < 1:
        return "under a second"
    if seconds >= 365 * 86400:
        return f"{seconds / (365 * 86400):,.1f} years"
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 600 else f"{seconds:.0f} s"


def exit_words(status: int) -> str:
    """A waitpid status in words: "killed by SIGKILL", "exit status 3"."""
    return f"killed by {sg.signal_name(status & 0x7F)}" if status & 0x7F else f"exit status {status >> 8}"


def may_exit(role: Role, cmdline: tuple[str, ...], parent_cmdline: tuple[str, ...] = ()) -> bool:
    """Whether a child may exit by itself, and so send its parent SIGCHLD: not a DataLoader or compile worker, nor
    one of multiprocessing's helpers (they live as long as their parent; torch's SIGCHLD handler only raises)."""
    return role not in (Role.DATALOADER_WORKER, Role.COMPILE_WORKER) and not is_mp_helper(cmdline, parent_cmdline)


def build_views(ev: Evidence) -> list[ProcessView]:
    """One view per captured process."""
    live = [p for p in ev.processes if not p.exited and p.samples and not p.samples[-1].state.startswith("Z")]
    command = {p.info.pid: p.info.cmdline for p in ev.processes}
    parents = {p.info.ppid for p in live if may_exit(p.info.role, p.info.cmdline, command.get(p.info.ppid, ()))}
    ever = [p for p in ev.processes if any(not s.state.startswith("Z") for s in p.samples)]  # (alive at a sample)
    others = {p.info.pid for p in ever if not is_mp_helper(p.info.cmdline, command.get(p.info.ppid, ()))}
    return [
        ProcessView(p, ev.clock_ticks, timer_bound(ev), p.info.pid in parents, not others - {p.info.pid})
        for p in ev.processes
    ]


def timer_bound(ev: Evidence) -> float:
    """How far off a timer's end may be and still come within the job's bounds: its --max-slow (the default one
    where the capture does not say), at most a day."""
    return min(sg.LONG_TIMER_S, ev.timer_bound_s or sg.DEFAULT_TIMER_BOUND_S)


def polls_with_timeout(v: ProcessView, t: ThreadView | None) -> str | None:
    """An asyncio event loop asleep in its own poll (``epoll_wait``, ``poll``) with a timeout that ends within the
    job's bounds, in words: the loop has a timer of its own to run by then (a task's ``asyncio.sleep``, a periodic
    callback), however short the window that counts its wake-ups (a loop polling every 0.5 s wakes twice in a 1-s
    look). None otherwise: a timeout alone proves a wake-up, not that the wait ends (a queue's ``get(timeout=5)``
    in a retry loop, a DataLoader's own wait for a batch, polls with one), so only the loop's own poll counts."""
    if t is None or not t.samples or t.woke_often:
        return None
    last = t.waiting
    if last.wait_max is None or last.state not in ("S", "D") or last.wait_max >= v.timer_bound_s:
        return None
    frames = last.frames or t.frames
    if (
        not frames
        or not sg.at(frames[0], "selectors.py")
        or not any(sg.at(f, "asyncio/base_events.py", frozenset({"_run_once"})) for f in frames[:3])
    ):
        return None
    return (
        f"waits in {last.syscall}() at {describe(innermost_user(frames) or frames[0])} with a "
        f"timeout of {last.wait_max:g} s: the kernel wakes it by then"
    )


def bounded_ending(t: ThreadView | None) -> str | None:
    """Where thread ``t`` is in torch's own ending of its DataLoader workers, joining one (a bounded wait: each
    worker is joined for up to ``WORKER_JOIN_S``, then terminated and joined as long again), that fact in words;
    None elsewhere. Only a worker's join is bounded: the pin-memory thread's, in the same ending, has no timeout."""
    frames = t.frames if t is not None else ()
    i = next((i for i, f in enumerate(frames) if sg.at(f, sg.DATALOADER_PY, sg.DATALOADER_SHUTDOWN)), None)
    if i is None or not any("/multiprocessing/" in sg.stdlib_path(f.file) for f in frames[:i]):
        return None
    return (
        f"is in torch's DataLoader worker shutdown ({describe(frames[i])}): each worker is joined for up to "
        f"{sg.WORKER_JOIN_S:.0f} s, then terminated and joined as long again"
    )


def moves_for_its_process(v: ProcessView, t: ThreadView) -> bool:
    """Thread ``t``, not the main one, is the one thread of ``v`` that could have moved the process's bytes and made
    its read and write calls: it woke or ran, and every other thread sat still over the window (never woken, at no
    CPU: a read or a write that moves bytes returns, and wakes its thread). A download thread while main waits on
    its queue."""
    if t is v.main_thread or ((t.wakeups or 0) == 0 and (t.cpu_percent or 0.0) <= IDLE_CPU_PERCENT):
        return False
    return all(o.wakeups == 0 and (o.cpu_percent or 0.0) <= IDLE_CPU_PERCENT for o in v.threads if o.tid != t.tid)
