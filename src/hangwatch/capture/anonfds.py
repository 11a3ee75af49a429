"""The anonymous files of the kernel whose fdinfo says what a wait on them waits for: a timerfd (its timer), a signalfd
(the signals of its mask), an eventfd (which one: its id), a pidfd (its process). A read of a timerfd or a signalfd
is read as the wait it is: a sleep until the timer, a sigwait."""

from __future__ import annotations

import os

from hangwatch.capture.proc import PROC, read_text
from hangwatch.signatures import TIMERFD

SIGNALFD = "anon_inode:[signalfd]"  # a file descriptor a signal is read from (signalfd)


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
