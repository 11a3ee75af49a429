"""Whether the whole job is still, seen from the kernel's side, and when that calls for a look.

Progress stops long before --min-stall says so: a job whose every process sits in a wait, spending no CPU and
moving no bytes, cannot be doing its work, whatever its progress clock says (or before it has one: a job that
never prints). Every STILL_SCAN_S the loop reads two small files per process of the job (``/proc/PID/stat``: its
state and CPU time, all threads together; ``/proc/PID/io``: the bytes it read and wrote, pipes and sockets
included; no ptrace, microseconds each). When the job has stayed still for STILL_S, a look is due at once; the
look decides as always (a proof of a hang acts; anything else changes nothing). While it stays still the looks
space out (FIRST_GAP_S, then twice as long each time, at most --min-stall), until its next progress.

Still means: the same processes as at the last scan, none of them runnable or stopped, at most STILL_TICKS_PER_S of CPU
between them, not one byte read or written, and, counted over every thread (``/proc/PID/task/TID/schedstat``: the
times it was run), at most STILL_WAKES_PER_S wake-ups between them: a poller that wakes every few seconds and goes
back to sleep is still; a thread woken by data arriving on a socket (``recv`` is not counted in the process's I/O
bytes) is not. The threads are read only when the processes' own counters say still, and then every STILL_S: a
working job costs two reads per process a second.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import field

from hangwatch.records.values import frozen, mutable

STILL_SCAN_S = 1.0  # how often the job's tree is read
STILL_S = 3.0  # how long it must stay still for a look
FIRST_GAP_S = 5.0  # the gap after the first look of a stall; it doubles while the job stays still
STILL_TICKS_PER_S = 2.0  # clock ticks (1/100 s) per second of CPU the whole job may spend and be still
STILL_WAKES_PER_S = 3.0  # times its threads may be run, per second, all together, and the job be still


@frozen
class Reading:
    """The job's processes at one scan: which, whether any runs, their CPU ticks and bytes moved together."""

    pids: frozenset[int]
    running: bool
    ticks: int
    chars: int


def _read(path: str) -> bytes | None:
    """A small /proc file's bytes (the first 4 KiB), None where unreadable: os.open and os.read, half the cost of
    open() (this runs per process, and per thread, every second)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and CPU ticks (utime + stime, all its threads), from /proc/PID/stat. (Read here,
    not with capture/proc.py: the loop's every second must not load the capture's modules, which a run that never
    stalls does not need.)"""
    raw = _read(f"/proc/{pid}/stat")
    if not raw:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()  # the name may hold spaces and parentheses
    try:
        return fields[0].decode(), int(fields[11]) + int(fields[12])
    except (IndexError, ValueError):
        return None


def _chars(pid: int) -> int:
    """The bytes a process read and wrote (rchar + wchar: files, pipes and sockets), 0 where unreadable."""
    total = 0
    for line in (_read(f"/proc/{pid}/io") or b"").splitlines():
        key, _, value = line.partition(b":")
        if key in (b"rchar", b"wchar") and value.strip().isdigit():
            total += int(value)
    return total


def read_wakes(pids: Iterable[int]) -> int:
    """How many times every thread of these processes has been run, all together (schedstat's third field)."""
    total = 0
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            raw = _read(f"/proc/{pid}/task/{tid}/schedstat")
            parts = raw.split() if raw else []
            if len(parts) >= 3 and parts[2].isdigit():
                total += int(parts[2])
    return total


def read_job(pids: Iterable[int]) -> Reading:
    """One scan of the job's living processes (a process gone since the tree was last read is left out)."""
    alive: set[int] = set()
    running, ticks, chars = False, 0, 0
    for pid in pids:
        st = _stat(pid)
        if st is None or st[0] in ("Z", "X"):
            continue
        alive.add(pid)
        running = running or st[0] in ("R", "T", "t")  # a stopped process is not still: someone stopped it, and
        # continues it (a debugger, Ctrl-Z, a scheduler's preemption); its stop is judged by the clock, as before
        ticks += st[1]
        chars += _chars(pid)
    return Reading(frozenset(alive), running, ticks, chars)


def quiet_between(a: Reading, b: Reading, seconds: float) -> bool:
    """Whether the processes' own counters stayed still from reading ``a`` to ``b``, ``seconds`` apart."""
    return (
        bool(b.pids)
        and a.pids == b.pids
        and not b.running
        and b.ticks - a.ticks <= STILL_TICKS_PER_S * max(seconds, STILL_SCAN_S)
        and b.chars == a.chars
    )


@mutable
class Stillness:
    """One attempt's stillness: the last scan, since when the job has been still, and when a look is due."""

    pids: list[int] = field(default_factory=list)  # the job's living processes, as the loop's scan last found them
    last: Reading | None = None
    last_at: float = 0.0
    woken: tuple[float, int] | None = None  # while quiet: when its threads' wake-ups were last counted, and how many
    still_since: float | None = None
    stall: float | None = None  # the progress (its time) the gap belongs to; a new progress starts over
    gap: float = FIRST_GAP_S
    next_look_at: float = 0.0
    looked_at: float | None = None  # the last look it called for

    def scan(self, pids: Iterable[int], now: float, progress_at: float | None) -> None:
        """Read the job's tree, at most every STILL_SCAN_S; its threads every STILL_S while the processes are quiet."""
        if self.last is not None and now - self.last_at < STILL_SCAN_S:
            return
        reading = read_job(pids)
        if progress_at != self.stall:  # progress since: a new stall, looked at from the start, unless a look came
            self.stall = progress_at  # lately (a job still for seconds at every step: one look per --min-stall or so)
            if self.looked_at is None or now - self.looked_at >= self.gap:
                self.gap, self.next_look_at = FIRST_GAP_S, 0.0
        if self.last is None or not quiet_between(self.last, reading, now - self.last_at):
            self.woken = self.still_since = None
        elif self.woken is None:
            self.woken = (now, read_wakes(reading.pids))
        elif now - self.woken[0] >= STILL_S:
            wakes = read_wakes(reading.pids)
            if wakes - self.woken[1] <= STILL_WAKES_PER_S * (now - self.woken[0]):
                self.still_since = self.still_since if self.still_since is not None else self.woken[0]
            else:
                self.still_since = None
            self.woken = (now, wakes)
        self.last, self.last_at = reading, now

    def lost_one(self) -> bool:
        """Whether the newest scan found fewer of the tree's processes alive than the loop's last walk listed (one
        ended; for a moment after a walk that found new ones, too)."""
        return self.last is not None and len(self.last.pids) < len(self.pids)

    def look_due(self, now: float) -> bool:
        """Whether the job has been still (for STILL_S at least: the span its threads were counted over) and its
        next look has come."""
        return self.still_since is not None and now >= self.next_look_at

    def forget(self) -> None:
        """The job was held (the reader of hangwatch's output did not read): a stillness it did not choose is not
        its own, so stillness is measured again from the next scan."""
        self.still_since, self.last, self.woken = None, None, None

    def looked(self, now: float, min_stall: float) -> None:
        """A look was taken now: the next one, while it stays still, after the gap, which doubles; the look's own
        reads moved bytes in the job (its hook answering), so stillness is measured again from the next scan."""
        self.next_look_at, self.looked_at = now + self.gap, now
        self.gap = min(self.gap * 2, max(min_stall, FIRST_GAP_S))
        self.still_since, self.last, self.woken = None, None, None
