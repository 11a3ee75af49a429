"""What a blocked thread is waiting on: its system call and the file descriptor behind it.

``/proc/PID/task/TID/syscall`` holds the syscall number and arguments of a sleeping thread; for
calls whose first argument is a file descriptor we resolve it (socket, pipe, file). Sockets are
matched to /proc/net/{tcp,tcp6,udp,udp6} by inode for their addresses.
"""

from __future__ import annotations

import os
import platform
import socket
import struct
import time

from hangwatch.capture.anonfds import signalfd_mask, timerfd_left
from hangwatch.capture.proc import PROC, read_stat, read_text
from hangwatch.records.values import frozen

# Syscalls whose first argument is an fd, by architecture (asm/unistd_64.h, asm-generic/unistd.h).
_FD_SYSCALLS = {
    "x86_64": {
        0: "read",
        1: "write",
        17: "pread64",
        19: "readv",
        42: "connect",
        43: "accept",
        44: "sendto",
        45: "recvfrom",
        46: "sendmsg",
        47: "recvmsg",
        288: "accept4",
        74: "fsync",
        75: "fdatasync",
        73: "flock",
        72: "fcntl",
    },
    "aarch64": {
        63: "read",
        64: "write",
        67: "pread64",
        65: "readv",
        203: "connect",
        202: "accept",
        206: "sendto",
        207: "recvfrom",
        211: "sendmsg",
        212: "recvmsg",
        242: "accept4",
        82: "fsync",
        83: "fdatasync",
        32: "flock",
        25: "fcntl",
    },
}
_TABLE = _FD_SYSCALLS.get(platform.machine(), {})
# Waits whose arguments say whether they can time out: name -> (index of the timeout argument, how it
# is passed: "ptr" (NULL: no timeout), "ms" (a negative int: none)). Sleeps always end.
_TIMED = {
    "x86_64": {
        202: ("futex", 3, "ptr"),
        7: ("poll", 2, "ms"),
        271: ("ppoll", 2, "ptr"),
        23: ("select", 4, "ptr"),
        270: ("pselect6", 4, "ptr"),
        232: ("epoll_wait", 3, "ms"),
        281: ("epoll_pwait", 3, "ms"),
        35: ("nanosleep", 0, "sleep"),
        230: ("clock_nanosleep", 0, "sleep"),
        61: ("wait4", 0, "none"),
        247: ("waitid", 0, "none"),
        34: ("pause", 0, "none"),
        128: ("sigwait", 2, "ptr"),  # rt_sigtimedwait(set, info, timeout, size): signal.sigwait, sigtimedwait
    },
    "aarch64": {
        98: ("futex", 3, "ptr"),
        73: ("ppoll", 2, "ptr"),
        72: ("pselect6", 4, "ptr"),
        22: ("epoll_pwait", 3, "ms"),
        101: ("nanosleep", 0, "sleep"),
        115: ("clock_nanosleep", 0, "sleep"),
        260: ("wait4", 0, "none"),
        95: ("waitid", 0, "none"),
        137: ("sigwait", 2, "ptr"),
    },
}.get(platform.machine(), {})
# Polls over a set of files: the index of the argument that counts them (``select.select([], [], [])`` waits on none)
_ON_FDS = {"select": 0, "pselect6": 0, "poll": 1, "ppoll": 1}
FUTEX_PRIVATE_FLAG = 128
F_SETLKW, F_OFD_SETLKW = 7, 38  # fcntl commands that wait for a lock (asm-generic/fcntl.h)
LOCK_NB = 4


@frozen
class BlockedCall:
    """What /proc/PID/task/TID/syscall says of a sleeping thread: the call, its fd (fd-taking calls),
    whether it can time out (None: the call does not say), and for a futex its address and whether it
    is shared between processes (a multiprocessing lock or semaphore lives in shared memory)."""

    name: str
    fd: int | None = None
    timeout: bool | None = None
    futex: int | None = None
    shared: bool = False
    wakes_in: float | None = None  # a sleep: seconds until its timer ends, read from the request it passed
    wait_max: float | None = None  # a poll's timeout as it passed it (seconds): it wakes by then at the latest
    child: int | None = None  # wait4/waitid: the one child it waits for (None: any child, or not a wait)
    signals: int | None = None  # sigwait: the set it waits for, from its memory or a signalfd's fdinfo; None: unread

    @property
    def lock_wait(self) -> bool:
        """A blocking wait for a file lock: flock without LOCK_NB, fcntl F_SETLKW / F_OFD_SETLKW."""
        return self.name in ("flock", "fcntl")


Call = tuple[int, list[int]]  # a thread's system call as /proc reads it: its number and its first six arguments


def read_call(pid: int, tid: int) -> Call | None:
    """The system call a thread is in now; None for one running (its state, read a moment earlier, may say it
    slept: it woke in between), one blocked outside any call (a page fault), one gone, or where /proc does not say."""
    raw = read_text(PROC / str(pid) / "task" / str(tid) / "syscall")
    if not raw:
        return None
    parts = raw.split()
    try:
        nr, args = int(parts[0]), [int(a, 16) for a in parts[1:7]]
    except (ValueError, IndexError):
        return None  # "running"
    return (nr, args) if nr >= 0 else None  # -1 SP PC: not in a system call


RESTART_NR = {"x86_64": 219, "aarch64": 128}.get(platform.machine(), -1)  # restart_syscall
# The wait channel of a relative sleep resumed after a stop (no function of the sleep's own is shown): the syscall
# entry. Only relative sleeps, timed futex waits and timed polls restart so; an absolute sleep is made again.
RESUMED_SLEEP_WCHANS = frozenset({"do_syscall_64", "__x64_sys_restart_syscall", "invoke_syscall", "el0_svc_common"})
_NR_OF = {name: nr for nr, (name, *_) in _TIMED.items()}


def _restarted(pid: int, tid: int, nr: int, args: list[int]) -> tuple[int, BlockedCall | None]:
    """A wait interrupted (by a ptrace stop: a stack read) and resumed through ``restart_syscall``: the original
    call's registers are intact, its number is not. The kernel's wait channel says which call it was: a poll
    (its arguments still readable), or a sleep or a futex wait that had a timeout (only those restart this way; the
    futex wait's timeout still readable through its arguments). A sleep resumed so may show no wait channel of its
    own (``do_syscall_64``, the syscall's entry): it is read as a sleep, its request read from its registers; an
    unreadable wait channel says nothing."""
    if nr != RESTART_NR:
        return nr, None
    wchan = read_text(PROC / str(pid) / "task" / str(tid) / "wchan") or ""
    if "poll" in wchan:
        return (_NR_OF.get("poll", _NR_OF.get("ppoll", nr)) if "epoll" not in wchan else nr), None
    if "nanosleep" in wchan or "nsleep" in wchan or wchan in RESUMED_SLEEP_WCHANS:
        if len(args) >= 3 and args[0] in CLOCKS and args[1] == 0:  # clock_nanosleep(clock, 0, t): a relative one
            return nr, BlockedCall(
                "clock_nanosleep", timeout=True, wakes_in=_sleep_left(pid, tid, "clock_nanosleep", args)
            )
        return nr, BlockedCall("nanosleep", timeout=True, wakes_in=_sleep_left(pid, tid, "nanosleep", args))
    if "futex" not in wchan:
        return nr, None  # (an unreadable wait channel, "0" or empty, says nothing of which call it was)
    if len(args) > 3:  # the registers are the futex call's: its word, its flags, its timeout
        left = _futex_left(pid, tid, args)
        return nr, BlockedCall(
            "futex", timeout=True, futex=args[0], shared=not args[1] & FUTEX_PRIVATE_FLAG, wakes_in=left
        )
    return nr, BlockedCall("futex", timeout=True)


def read_blocked_call(pid: int, tid: int, got: Call | None = None) -> BlockedCall | None:
    """The system call a sleeping thread waits in, with what its arguments say; None where unreadable
    or not a call we know. ``got``: its ``read_call``, where the caller read it already."""
    got = got if got is not None else read_call(pid, tid)
    if got is None:
        return None
    nr, args = got
    nr, known = _restarted(pid, tid, nr, args)
    if known is not None:
        return known
    name = _TABLE.get(nr)
    if name is not None and len(args) >= 2:
        if name == "flock" and args[1] & LOCK_NB:
            return None  # a non-blocking try does not wait
        if name == "fcntl" and args[1] not in (F_SETLKW, F_OFD_SETLKW):
            return None
        left = timerfd_left(pid, args[0]) if name == "read" else None
        if left is not None:  # a read of a timer: it ends when the timer fires; disarmed, only a re-arm ends it
            return BlockedCall(name, fd=args[0], timeout=left > 0, wakes_in=left or None)
        mask = signalfd_mask(pid, args[0]) if name == "read" else None
        if mask is not None:  # a read of a signalfd: a sigwait for the signals of its mask, read from the kernel
            return BlockedCall("sigwait", fd=args[0], timeout=False, signals=mask)
        return BlockedCall(name, fd=args[0], timeout=False if name in ("flock", "fcntl") else None)
    timed = _TIMED.get(nr)
    if timed is None or len(args) <= timed[1]:
        return None
    name, i, how = timed
    if how == "sleep":
        return BlockedCall(name, timeout=True, wakes_in=_sleep_left(pid, tid, name, args))
    if how == "none":
        child = None
        if name == "wait4" and args and 0 < args[0] < 2**31:
            child = args[0]  # wait4(pid, ...): that pid; -1 (any child) arrives as 0xffff...
        elif name == "waitid" and len(args) >= 2 and args[0] == P_PID:
            child = args[1]
        return BlockedCall(name, timeout=False, child=child)
    value = args[i]
    timeout = value != 0 if how == "ptr" else not (value >= 2**31)  # an int -1 arrives as 0xffff...
    if not timeout and name in _ON_FDS and args[_ON_FDS[name]] == 0:
        return BlockedCall("pause", timeout=False)  # a wait on no file and no timer: only a signal ends it
    if name == "futex":
        left = _futex_left(pid, tid, args) if timeout else None
        return BlockedCall(name, timeout=timeout, futex=args[0], shared=not args[1] & FUTEX_PRIVATE_FLAG, wakes_in=left)
    wait_max = value / 1000 if how == "ms" and timeout else None
    if name in ("select", "pselect6") and timeout:  # its request, read in place: a timeval (select's), a timespec
        wait_max = _timespec(pid, tid, value, 1e6 if name == "select" else 1e9)
    # a poll's timeout is relative: at least the request less the thread's age is left of it
    left = _least_left(pid, tid, wait_max) if wait_max is not None else None
    if name in ("ppoll", "sigwait") and timeout:  # (aarch64's poll; sigtimedwait): a relative timespec
        left = _timer_left(pid, tid, 1, 0, value)
    if name == "sigwait" and timeout:  # it ends by its request at the latest (it began before now)
        wait_max = _timespec(pid, tid, value)
    signals = _sigset(pid, tid, args[0]) if name == "sigwait" else None
    return BlockedCall(name, timeout=timeout, wait_max=wait_max, wakes_in=left, signals=signals)


# Calls a ptrace stop ends early with a short count: a write blocked on a full pipe or socket returns what it moved
# so far when the thread is stopped (pipe_write, tcp_sendmsg: "if (signal_pending(current)) break"). Python's
# buffered writer (sys.stdout.buffer, a text stream over it, a socket's makefile) then drops the rest and reports
# it all written: a look of the helper blocked in `sys.stdout.buffer.write(400 KB)` delivered 65,536 bytes (CPython
# 3.11, measured; a loop of os.write survives). A receive with MSG_WAITALL ends short the same way. Other waits
# (read, poll, futex, sleep, accept) restart as if never stopped.
_CUT_SHORT = {
    "x86_64": {
        1: "write",
        18: "pwrite64",
        20: "writev",
        296: "pwritev",
        328: "pwritev2",
        44: "sendto",
        46: "sendmsg",
        307: "sendmmsg",
        40: "sendfile",
        275: "splice",
        276: "tee",
        278: "vmsplice",
        326: "copy_file_range",
    },
    "aarch64": {
        64: "write",
        68: "pwrite64",
        66: "writev",
        70: "pwritev",
        287: "pwritev2",
        206: "sendto",
        211: "sendmsg",
        269: "sendmmsg",
        71: "sendfile",
        76: "splice",
        77: "tee",
        75: "vmsplice",
        285: "copy_file_range",
    },
}.get(platform.machine(), {})
# recvfrom(fd, buf, len, flags, ...) and recvmsg(fd, msg, flags): the index of their flags argument.
_RECEIVES = {
    "x86_64": {45: ("recvfrom", 3), 47: ("recvmsg", 2)},
    "aarch64": {207: ("recvfrom", 3), 212: ("recvmsg", 2)},
}.get(platform.machine(), {})
MSG_WAITALL = 0x100


def cut_short_by_a_stop(got: Call) -> str | None:
    """The call a sleeping thread is in (its ``read_call``) when a ptrace stop would end it with a short count (a
    write blocked on a full pipe: its bytes lost behind a buffered writer), e.g. ``write(2) on fd 1``; None for any
    other wait."""
    nr, args = got
    name = _CUT_SHORT.get(nr)
    if name is None and nr in _RECEIVES:
        receive, flags = _RECEIVES[nr]
        name = receive if len(args) > flags and args[flags] & MSG_WAITALL else None
    if name is None:
        return None
    return f"{name}(2) on fd {args[0]}" if args and args[0] < 2**31 else f"{name}(2)"


TIMER_ABSTIME = 1
P_PID = 1  # waitid's idtype for one pid
BOOTTIME = getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)  # the clock of /proc's start times
CLOCKS = {0: time.CLOCK_REALTIME, 1: time.CLOCK_MONOTONIC, 7: getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)}


FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_CLOCK_REALTIME = 0, 9, 256
FUTEX_CMD = 0x7F  # the operation, without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME


def _futex_left(pid: int, tid: int, args: list[int]) -> float | None:
    """Seconds until a futex wait's timeout ends: ``FUTEX_WAIT_BITSET`` waits to an absolute deadline (monotonic,
    or the real-time clock with FUTEX_CLOCK_REALTIME: glibc's sem_clockwait and pthread_cond_timedwait, so Python's
    ``Lock.acquire(timeout=...)``, ``Event.wait(timeout)``, ``Condition.wait(timeout)``); ``FUTEX_WAIT``'s timeout is
    relative (at least the request less the thread's age is left). None for other operations or where unreadable."""
    op = args[1] & FUTEX_CMD
    if op == FUTEX_WAIT_BITSET:
        return _timer_left(pid, tid, 0 if args[1] & FUTEX_CLOCK_REALTIME else 1, TIMER_ABSTIME, args[3])
    if op == FUTEX_WAIT:
        return _timer_left(pid, tid, 1, 0, args[3])
    return None


def _sleep_left(pid: int, tid: int, name: str, args: list[int]) -> float | None:
    """Seconds until a sleeping thread's timer ends: ``clock_nanosleep(clock, TIMER_ABSTIME, deadline, _)``
    (Python's time.sleep sleeps to an absolute monotonic deadline), the deadline read from the target's memory
    (16 bytes). For a relative sleep (``sleep 100000``, a C helper's nanosleep), at least the request less the
    thread's age is left (the sleep began after the thread did): that, when it is more than nothing. None where
    it cannot be read."""
    if name == "clock_nanosleep" and len(args) >= 3:
        return _timer_left(pid, tid, args[0], args[1], args[2])
    if name == "nanosleep" and args:
        return _timer_left(pid, tid, 1, 0, args[0])
    return None


def _timer_left(pid: int, tid: int, clock: int, flags: int, addr: int) -> float | None:
    """Seconds left of the timespec at ``addr`` in the target's memory: to its deadline on ``clock`` where ``flags``
    has TIMER_ABSTIME, else at least the request less the thread's age; None where it cannot be read."""
    request = _timespec(pid, tid, addr)
    if request is None or clock not in CLOCKS:
        return None
    if flags & TIMER_ABSTIME:
        return max(0.0, request - time.clock_gettime(CLOCKS[clock]))
    return _least_left(pid, tid, request)


def _memory(pid: int, tid: int, addr: int, size: int) -> bytes | None:
    """``size`` bytes at ``addr`` in the memory of a thread still in its call (one with ``addr`` among its arguments,
    before and after the read); None where unreadable (another user's process under ptrace_scope 1 needs root or an
    ancestor, as py-spy does)."""
    task = PROC / str(pid) / "task" / str(tid)
    before = read_text(task / "syscall")
    if before is None or f"{addr:#x}" not in before.split()[1:7]:
        return None  # (a thread that left the call whose argument this was, since its registers were read)
    try:
        with open(PROC / str(pid) / "mem", "rb") as f:
            f.seek(addr)
            raw = f.read(size)
    except (OSError, ValueError, OverflowError):
        return None
    if len(raw) != size or read_text(task / "syscall") != before:
        return None  # (a thread that left the call between the reads: its stack's bytes are no longer its request)
    return raw


def _sigset(pid: int, tid: int, addr: int) -> int | None:
    """The signal set at ``addr`` (the kernel's 64 bits: bit n-1 for signal n) of a thread in sigwait; None: unread (an
    empty set too: a set of nothing cannot be told from memory not yet written)."""
    raw = _memory(pid, tid, addr, 8) if addr else None
    return (int.from_bytes(raw, "little") or None) if raw is not None else None


def _timespec(pid: int, tid: int, addr: int, unit: float = 1e9) -> float | None:
    """The timespec (``unit`` 1e6: a timeval) at ``addr`` in the memory of a thread still in its call, in seconds; None
    where unreadable."""
    raw = _memory(pid, tid, addr, 16)
    sec, part = struct.unpack("<qq", raw) if raw is not None else (-1, 0)
    return float(sec) + float(part) / unit if sec >= 0 and 0 <= part < unit else None  # (else none: unread)


def _least_left(pid: int, tid: int, request: float) -> float | None:
    """The least left of a relative timeout of ``request`` seconds: the request less the thread's age (the wait cannot
    have begun before the thread did); None when nothing is sure to be left, or unreadable."""
    st = read_stat(PROC / str(pid) / "task" / str(tid) / "stat")
    if st is None:
        return None
    age = time.clock_gettime(BOOTTIME) - st.starttime / os.sysconf("SC_CLK_TCK")
    left = request - age
    return left if left > 0 else None


POLLIN, POLLOUT = 0x1, 0x4
MAX_POLLED = 64  # pollfd entries read at most (8 bytes each)


def polled_fds(pid: int, tid: int) -> list[tuple[int, bool]] | None:
    """The fds a thread sleeping in ``poll``/``ppoll`` (or ``epoll_wait``, ``select``) waits on, each with whether it
    waits to read (POLLIN) rather than to write: the ``pollfd`` array read from the target's memory (an epoll's set
    from its fdinfo, a select's bitmaps). None when the thread is not in such a call or its memory cannot be read."""
    got = read_call(pid, tid)
    if got is None:
        return None
    nr, args = got
    nr, _ = _restarted(pid, tid, nr, args)
    timed = _TIMED.get(nr)
    if timed is not None and timed[0] in ("epoll_wait", "epoll_pwait") and args:
        return _epoll_fds(pid, args[0])
    if timed is not None and timed[0] in ("select", "pselect6") and len(args) >= 4:
        return _selected_fds(pid, args[0], args[1:4])
    if timed is None or timed[0] not in ("poll", "ppoll") or len(args) < 2:
        return None
    addr, count = args[0], args[1]
    if not 0 < count <= MAX_POLLED:
        return None  # (more: the files past those read may end the wait)
    try:
        with open(PROC / str(pid) / "mem", "rb") as f:
            f.seek(addr)
            raw = f.read(8 * count)
    except (OSError, ValueError, OverflowError):
        return None
    out = []
    for i in range(len(raw) // 8):
        fd, events, _ = struct.unpack_from("<ihh", raw, 8 * i)
        if fd >= 0 and events & (POLLIN | POLLOUT):
            out.append((fd, bool(events & POLLIN)))
    return out


def epoll_of(pid: int, tid: int) -> int | None:
    """The epoll fd a thread sleeping in ``epoll_wait``/``epoll_pwait`` waits on; None in any other call."""
    got = read_call(pid, tid)
    timed = _TIMED.get(got[0]) if got is not None else None
    epoll = timed is not None and timed[0] in ("epoll_wait", "epoll_pwait")
    return got[1][0] if got is not None and got[1] and epoll else None


def _selected_fds(pid: int, nfds: int, sets: list[int]) -> list[tuple[int, bool]] | None:
    """The fds a ``select``/``pselect6`` waits on, from its three ``fd_set`` bitmaps in the target's memory (read,
    write, exceptional: read as a read); None when there are too many or the memory cannot be read."""
    if not 0 < nfds <= 1024:
        return None
    size = (nfds + 63) // 64 * 8  # an fd_set is an array of longs
    bits: list[int] = []
    try:
        with open(PROC / str(pid) / "mem", "rb") as f:
            for addr in sets:
                if addr:
                    f.seek(addr)
                    raw = f.read(size)
                    if len(raw) != size:
                        return None
                    bits.append(int.from_bytes(raw, "little"))
                else:
                    bits.append(0)
    except (OSError, ValueError, OverflowError):
        return None
    reads, writes = bits[0] | bits[2], bits[1]
    out = [(fd, reading) for fd in range(nfds) for reading, bs in ((True, reads), (False, writes)) if bs >> fd & 1]
    return out if len(out) <= MAX_POLLED else None


_OPEN_CALLS = {"x86_64": {2: ("open", 0, 1), 257: ("openat", 1, 2)}, "aarch64": {56: ("openat", 1, 2)}}.get(
    platform.machine(), {}
)  # nr -> (name, index of the path argument, index of the flags)
MAX_PATH_READ = 4096
AT_FDCWD = 0xFFFFFF9C  # openat's "the working directory": an int -100 (the register's low 32 bits)


def opening(pid: int, tid: int) -> tuple[str, int] | None:
    """The path and flags of the ``open``/``openat`` a thread sleeps in (a FIFO waiting for its other side), read
    from its registers and memory without stopping it; None when it is in no such call or the memory is unreadable.
    A relative path is joined to the directory it is relative to."""
    got = read_call(pid, tid)
    if got is None or got[0] not in _OPEN_CALLS:
        return None
    _, path_arg, flags_arg = _OPEN_CALLS[got[0]]
    args = got[1]
    addr, raw = args[path_arg], b""
    try:
        with open(PROC / str(pid) / "mem", "rb") as f:
            while b"\0" not in raw and len(raw) < MAX_PATH_READ:  # a page at a time: the next may be unmapped
                f.seek(addr + len(raw))
                piece = f.read(4096 - (addr + len(raw)) % 4096)
                if not piece:
                    break
                raw += piece
    except (OSError, ValueError, OverflowError):
        if b"\0" not in raw:
            return None
    path = raw.split(b"\0", 1)[0].decode(errors="replace")
    if path and not path.startswith("/"):  # relative: to an openat's directory fd, else to the working directory
        at = "cwd" if path_arg == 0 or args[0] & 0xFFFFFFFF == AT_FDCWD else f"fd/{args[0]}"
        try:
            path = os.path.join(os.readlink(PROC / str(pid) / at), path)
        except OSError:
            return None
    return (path, args[flags_arg]) if path else None


def _epoll_fds(pid: int, epfd: int) -> list[tuple[int, bool]] | None:
    """The fds an epoll instance watches (its /proc/PID/fdinfo ``tfd:`` lines), each with whether it waits to read
    (EPOLLIN); at most MAX_POLLED. None where unreadable."""
    raw = read_text(PROC / str(pid) / "fdinfo" / str(epfd))
    if raw is None:
        return None
    out = []
    for line in raw.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "tfd:" and parts[2] == "events:":
            try:
                fd, events = int(parts[1]), int(parts[3], 16)
            except ValueError:
                return None
            if events & (POLLIN | POLLOUT):  # EPOLLIN and EPOLLOUT are poll's bits
                out.append((fd, bool(events & POLLIN)))
    return out if len(out) <= MAX_POLLED else None  # a set cut short would hide a file that may end the wait


def _hex_addr(field: str) -> str:
    addr, port = field.split(":")
    raw = bytes.fromhex(addr)
    if len(raw) == 4:
        host = socket.inet_ntop(socket.AF_INET, struct.pack("<I", int(addr, 16)))
    else:
        words = struct.unpack("<4I", raw)
        host = socket.inet_ntop(socket.AF_INET6, struct.pack(">4I", *words))
    return f"{host}:{int(port, 16)}"


class SocketTables:
    """One SocketTable per network namespace for a capture sample: the kernel's tables belong to
    the namespace, so processes that share it (a whole job, usually) share one read."""

    def __init__(self) -> None:
        self._by_ns: dict[str, SocketTable] = {}

    def for_pid(self, pid: int) -> SocketTable:
        """The socket table of the network namespace ``pid`` lives in (read once per namespace)."""
        try:
            ns = os.readlink(PROC / str(pid) / "ns" / "net")
        except OSError:
            ns = f"pid:{pid}"
        if ns not in self._by_ns:
            self._by_ns[ns] = SocketTable(pid)
        return self._by_ns[ns]


LISTENING = " (listening)"  # said of a listening unix socket: no peer, any process may connect
_SO_ACCEPTCON = 0x10000  # /proc/net/unix's Flags of a listening socket


class SocketTable:
    """inode -> "tcp 1.2.3.4:5 -> 6.7.8.9:10" (a listening unix socket: "unix /path (listening)"), read lazily
    once per capture sample."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self._table: dict[str, str] | None = None

    def lookup(self, inode: str) -> str | None:
        """``local -> remote`` of a socket inode, or None."""
        if self._table is None:
            self._table = {}
            for proto in ("tcp", "tcp6", "udp", "udp6"):
                text = read_text(PROC / str(self._pid) / "net" / proto) or ""
                for line in text.splitlines()[1:]:
                    f = line.split()
                    if len(f) > 9:
                        try:
                            self._table[f[9]] = f"{proto.rstrip('6')} {_hex_addr(f[1])} -> {_hex_addr(f[2])}"
                        except (ValueError, OSError):
                            continue
            rows: dict[str, list[list[str]]] = {}
            for line in (read_text(PROC / str(self._pid) / "net" / "unix") or "").splitlines()[1:]:
                f = line.split(None, 7)  # Num RefCount Protocol Flags Type St Inode [Path]: a path may hold spaces
                if len(f) > 6:
                    rows.setdefault(f[6], []).append(f)
            for node, (f, *forged) in rows.items():
                try:  # a path with a newline in it makes a row of its own: an inode in two rows is not trusted
                    listening = not forged and len(f) > 7 and int(f[3], 16) & _SO_ACCEPTCON
                except ValueError:
                    continue
                if listening:  # a listening socket is always bound: it has a path (or an abstract "@name")
                    self._table[node] = f"unix {f[7]}{LISTENING}"
        return self._table.get(inode)


def describe_fd(pid: int, fd: int, sockets: SocketTable) -> str | None:
    """What ``fd`` of ``pid`` is, in words a finding can quote (a TCP peer, a pipe, a path)."""
    try:
        target = os.readlink(PROC / str(pid) / "fd" / str(fd))
    except OSError:
        return None
    if target.startswith("socket:["):
        inode = target[len("socket:[") : -1]
        return sockets.lookup(inode) or "socket (unix or other)"
    if target.startswith("pipe:"):
        return "pipe"
    fs = filesystem_of(pid, target) if target.startswith("/") else None
    return f"{target} ({fs})" if fs else target


def filesystem_of(pid: int, path: str) -> str | None:
    """The filesystem type of the mount ``path`` lives on, as ``pid`` sees it (nfs4, fuse.s3fs, ext4...)."""
    raw = read_text(PROC / str(pid) / "mounts")
    best, fstype = "", None
    for line in (raw or "").splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mount = parts[1].replace("\\040", " ")
        if (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) > len(best):
            best, fstype = mount, parts[2]
    return fstype
