"""The anonymous files of the kernel whose fdinfo says what a wait on them waits for: a timerfd (its timer), a signalfd
(the signals of its mask), an eventfd (which one: its id), a pidfd (its process). A read of a timerfd or a signalfd
is read as the wait it is: a sleep until the timer, a sigwait. Which processes hold the same one (a timerfd, an
epoll: the kernel gives them no id) is asked of the kernel (kcmp)."""

from __future__ import annotations

import ctypes
import functools
import os
import platform

from hangwatch.capture.proc import PROC, read_text
from hangwatch.signatures import TIMERFD

SIGNALFD = "anon_inode:[signalfd]"  # a file descriptor a signal is read from (signalfd)
EPOLL = "anon_inode:[eventpoll]"  # an epoll instance (its set: the fdinfo's tfd: lines)
# kcmp's number, for a 64-bit interpreter (a 32-bit one on a 64-bit kernel would call another syscall by it)
_KCMP_NR = {"x86_64": 312, "aarch64": 272}.get(platform.machine()) if ctypes.sizeof(ctypes.c_void_p) == 8 else None
KCMP_FILE = 0


def _fdinfo(pid: int, fd: int, target: str) -> list[str]:
    """The lines of the fdinfo of ``pid``'s ``fd``, where that fd is ``target``; none otherwise (or gone since)."""
    try:
        if os.readlink(PROC / str(pid) / "fd" / str(fd)) != target:
            return []
    except OSError:
        return []
    return (read_text(PROC / str(pid) / "fdinfo" / str(fd)) or "").splitlines()


def fdinfo_value(pid: int, fd: int, target: str, key: str) -> str | None:
    """The value of ``key`` in the fdinfo of ``pid``'s ``fd``, where that fd is ``target``; None otherwise."""
    return next(
        (line.split(":", 1)[1].strip() for line in _fdinfo(pid, fd, target) if line.startswith(key + ":")), None
    )


def timerfd_left(pid: int, fd: int) -> float | None:
    """Seconds until timerfd ``fd`` of ``pid`` fires (its fdinfo's ``it_value``): a read of it ends then; 0.0 where it
    is disarmed (only a timerfd_settime by a holder ends the read); None where ``fd`` is no timerfd."""
    sec, _, nsec = (fdinfo_value(pid, fd, TIMERFD, "it_value") or "").strip("()").partition(",")  # (seconds, ns)
    return int(sec) + int(nsec) / 1e9 if sec.strip().isdigit() and nsec.strip().isdigit() else None


def signalfd_mask(pid: int, fd: int) -> int | None:
    """The signals a read of signalfd ``fd`` of ``pid`` waits for (its fdinfo's ``sigmask``: bit n-1 for signal n),
    as a sigwait's; None where ``fd`` is no signalfd."""
    mask = fdinfo_value(pid, fd, SIGNALFD, "sigmask")
    try:
        return int(mask, 16) if mask is not None else None
    except ValueError:
        return None


def epoll_watches(pid: int, epfd: int) -> int | None:
    """How many files epoll ``epfd`` of ``pid`` watches, whatever it watches them for (its fdinfo's ``tfd:`` lines:
    one that waits only for a hang-up or for priority data counts too); None where it is no epoll, or unread."""
    lines = _fdinfo(pid, epfd, EPOLL)
    if not any(line.startswith("pos:") for line in lines):
        return None  # (gone between the two reads, or closed)
    return sum(line.startswith("tfd:") for line in lines)


# Timers a change of the wall clock may end sooner than their it_value says: on CLOCK_REALTIME (0) or
# CLOCK_REALTIME_ALARM (8), absolute (TFD_TIMER_ABSTIME, 1) or cancelled by a clock set (TFD_TIMER_CANCEL_ON_SET, 2)
WALL_CLOCKS = frozenset({0, 8})


def timer_is_steady(pid: int, fd: int) -> bool:
    """Whether timerfd ``fd`` of ``pid`` fires only by its own timer (its fdinfo's ``clockid`` and ``settime
    flags``): not a wall-clock timer a clock set (NTP, chrony, a person) may fire or cancel sooner, disarmed or not."""
    clock = fdinfo_value(pid, fd, TIMERFD, "clockid")
    flags = fdinfo_value(pid, fd, TIMERFD, "settime flags")
    if clock is None or flags is None:
        return False
    try:  # (an alarm clock's timer is kept as a wall-clock time even where set relative: never steady)
        return int(clock) not in WALL_CLOCKS or (int(clock) == 0 and int(flags, 8) == 0)
    except ValueError:
        return False


def same_file(pid: int, fd: int, other: int, other_fd: int) -> bool | None:
    """Whether ``other``'s ``other_fd`` is the very open file ``pid``'s ``fd`` is (kcmp(2), KCMP_FILE: a copy
    inherited by a fork, or passed over a socket); None where the kernel does not say (no kcmp, no permission)."""
    if _KCMP_NR is None:
        return None
    got = _libc().syscall(_KCMP_NR, pid, other, KCMP_FILE, fd, other_fd)
    return None if got < 0 else got == 0


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)
