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
_KCMP_NR = {"x86_64": 312, "aarch64": 272}.get(platform.machine())
KCMP_FILE = 0


def fdinfo_value(pid: int, fd: int, target: str, key: str) -> str | None:
    """The value of ``key`` in the fdinfo of ``pid``'s ``fd``, where that fd is ``target``; None otherwise."""
    try:
        if os.readlink(PROC / str(pid) / "fd" / str(fd)) != target:
            return None
    except OSError:
        return None
    lines = (read_text(PROC / str(pid) / "fdinfo" / str(fd)) or "").splitlines()
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith(key + ":")), None)


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
    one that waits only for a hang-up or for priority data counts too); None where it is no epoll."""
    if fdinfo_value(pid, epfd, EPOLL, "pos") is None:
        return None
    return sum(
        line.startswith("tfd:") for line in (read_text(PROC / str(pid) / "fdinfo" / str(epfd)) or "").splitlines()
    )


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
