"""The wait-for view's pipes, sockets and FIFOs (capture/waits.py runs the pass).

- Pipes: a thread blocked in ``read`` on a pipe waits for whoever holds its write end. Every process with that
  pipe open for writing (``/proc/PID/fd`` and the access mode in ``fdinfo``) is a holder: the job's processes
  first, then the host's, within PIPE_SCAN_S. A holder that left the job's tree is named like any other.
- A socket's other end, on this host, by inode (capture/sockpeer.py); a FIFO's ``open`` that waits for its other
  side; a poll with no timeout, its files followed to their holders (at most MAX_FOLLOWED_FILES).

Everything here reads; a holder outside the job's tree is read in non-blocking mode and never touched.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace

from hangwatch import signatures as sg
from hangwatch.capture import proc
from hangwatch.capture.anonfds import EPOLL, epoll_watches, fdinfo_value, same_file, timer_is_steady, timerfd_left
from hangwatch.capture.holders import (
    MAX_FD_SCAN_PIDS,
    O_ACCMODE,
    O_RDWR,
    O_WRONLY,
    holder,
)
from hangwatch.capture.sockpeer import backlog_listener, peer_inode
from hangwatch.capture.syscalls import epoll_of, opening, polled_fds
from hangwatch.records.evidence import (
    POLLED,
    LockWait,
    ProcessSample,
    ThreadSample,
)

PIPE_SCAN_S = 0.5  # bounded: a pipe's writers are looked for on the host for at most this long


def _opens(pid: int, fd: str, target: str, write: bool) -> bool:
    """Whether ``pid``'s ``fd`` is ``target`` (``pipe:[inode]``) opened for writing (``write``) or reading."""
    try:
        if os.readlink(proc.PROC / str(pid) / "fd" / fd) != target:
            return False
    except OSError:
        return False
    for line in (proc.read_text(proc.PROC / str(pid) / "fdinfo" / fd) or "").splitlines():
        if line.startswith("flags:"):
            try:
                mode = int(line.split()[1], 8) & O_ACCMODE
            except (IndexError, ValueError):
                return False
            return mode in (O_WRONLY, O_RDWR) if write else mode in (0, O_RDWR)
    return False


def pipe_holders(
    target: str, first: list[int], write: bool = True, budget_s: float = PIPE_SCAN_S
) -> tuple[list[int], bool]:
    """The processes holding ``target`` (``pipe:[inode]``) open for writing (``write``) or for reading:
    ``first`` (the job) always, then the host's other processes until ``budget_s`` runs out. Returns them and
    whether the search was complete."""
    return host_holders(first, lambda pid, fd: _opens(pid, fd, target, write), budget_s)


def host_holders(first: list[int], holds: Callable[[int, str], bool], budget_s: float) -> tuple[list[int], bool]:
    """The processes one of whose fds ``holds`` says is the file looked for: ``first`` (the job) always, then the
    host's others until ``budget_s`` runs out. Returns them and whether the search was complete."""
    deadline = time.monotonic() + budget_s
    out: list[int] = []
    unread = False  # a process of the job whose fds could not be read (a setuid or non-dumpable helper: ssh, sudo)
    order = [*first, *(p for p in proc.list_pids() if p not in set(first))]
    kin: Callable[[int], bool] | None = None
    for i, pid in enumerate(order[:MAX_FD_SCAN_PIDS]):
        if i >= len(first) and time.monotonic() > deadline:
            return out, False
        try:
            fds = os.listdir(proc.PROC / str(pid) / "fd")
        except PermissionError:  # (another user's, outside the job, and older than it: as before, not searched)
            kin = kin or _kin_of(first)
            unread = unread or i < len(first) or kin(pid)
            continue
        except OSError:  # (gone)
            continue
        if any(holds(pid, fd) for fd in fds):
            out.append(pid)
    return out, len(order) <= MAX_FD_SCAN_PIDS and not proc.narrowed() and not unread


def _real_uid(pid: int) -> int | None:
    """``pid``'s real user (its status's ``Uid:``, readable for any process, non-dumpable ones too); None if gone."""
    line = next(
        (x for x in (proc.read_text(proc.PROC / str(pid) / "status") or "").splitlines() if x.startswith("Uid:")), ""
    )
    parts = line.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def _kin_of(job: list[int]) -> Callable[[int], bool]:
    """Whether an unreadable process outside the job may still hold what the job made: one of the job's users' (or
    one whose user was not read), started after the job's oldest process (a non-dumpable descendant that left its
    tree). The job's users and start are read once; a job process gone since is left out."""
    users = {u for p in job if (u := _real_uid(p)) is not None}
    born = min((st.starttime for p in job if (st := proc.read_stat(proc.PROC / str(p) / "stat"))), default=None)

    def kin(pid: int) -> bool:
        uid, mine = _real_uid(pid), proc.read_stat(proc.PROC / str(pid) / "stat")
        return (uid is None or uid in users) and (born is None or mine is None or mine.starttime >= born)

    return kin


def _searched() -> str:
    """Why a search of the host for the other end of a pipe or a socket may have missed it ("searched for": the
    graph and the rules then prove nothing from what it did not find)."""
    if proc.narrowed():
        return "only its user's processes were searched for its other end (another user's are not read)"
    return f"the host's processes were searched for {PIPE_SCAN_S:g} s only"


def pipe_wait(
    pid: int,
    t: ThreadSample,
    job: dict[int, list[ProcessSample]],
    py_spy: str | None,
    now: float,
    fd: int | None = None,
    reading: bool | None = None,
) -> LockWait | None:
    """What a thread blocked on a pipe waits for. Reading: the pipe's writers (the waiter itself among them
    when it holds the write end too: then only another thread of its own can end the read). Writing (the
    pipe is full): its readers, kind ``pipe_full``. ``fd``/``reading``: one fd of a ``poll``."""
    fd = t.fd if fd is None else fd
    target = proc.fd_target(pid, fd) if fd is not None else None
    if not target or not target.startswith("pipe:["):
        return None
    reading = t.syscall in sg.READ_SYSCALLS if reading is None else reading
    found, complete = pipe_holders(target, sorted(job), write=reading)
    how = "holds the pipe's write end" if reading else "holds the pipe's read end"
    holders = tuple(
        holder(w, job, py_spy, now, how + " (its /proc/PID/fd and fdinfo)", name=None) for w in found if w != pid
    )
    note = None if complete else _searched()
    if pid in found:
        end = "write" if reading else "read"
        note = f"the waiter itself holds the pipe's {end} end too" + (f"; {note}" if note else "")
    return LockWait(
        t.tid, "pipe" if reading else "pipe_full", target, False, holders=holders, waiters=(pid,), note=note
    )


def reads_socket(t: ThreadSample) -> bool:
    """Blocked in a read of a socket with no timeout (Python's blocking socket; one with a timeout polls), or in a
    write to one whose buffers are full (its other end reads too slowly, or not at all)."""
    return (
        t.state == "S"
        and t.syscall in sg.READ_SYSCALLS | sg.WRITE_SYSCALLS
        and t.fd is not None
        and (t.fd_target or "").startswith(("socket", "tcp "))
    )


def socket_wait(
    pid: int,
    t: ThreadSample,
    job: dict[int, list[ProcessSample]],
    py_spy: str | None,
    now: float,
    fd: int | None = None,
    reading: bool | None = None,
) -> LockWait | None:
    """What a thread blocked reading a connected socket waits for: the processes holding its other end, when
    that end is on this host (a unix socket, a loopback connection). A remote peer is the network rule's."""
    fd = t.fd if fd is None else fd
    target = proc.fd_target(pid, fd) if fd is not None else None
    if not target or not target.startswith("socket:["):
        return None
    peer = peer_inode(pid, target[len("socket:[") : -1])
    listener = None if peer is not None else backlog_listener(pid, target[len("socket:[") : -1])
    if peer is None and listener is None:
        return None
    found, complete = pipe_holders(f"socket:[{peer or listener}]", sorted(job), write=True)
    how = (
        "holds the socket's other end (its /proc/PID/fd and the kernel's socket tables)"
        if listener is None
        else f"{sg.NOT_ACCEPTED} it holds, and has not accepted it"
    )
    holders = tuple(holder(w, job, py_spy, now, how, name=None) for w in found if w != pid)
    note = None if complete else _searched()
    if pid in found:
        end = "the socket's other end" if listener is None else f"the listening socket ({sg.NOT_ACCEPTED})"
        note = f"the waiter itself holds {end} too" + (f"; {note}" if note else "")
    described = t.fd_target if fd == t.fd else None
    what = described if (described or "").startswith("tcp ") else "a local socket"
    reading = t.syscall in sg.READ_SYSCALLS if reading is None else reading
    kind = "socket" if reading else "socket_full"
    return LockWait(t.tid, kind, f"{what} ({target})", False, holders=holders, waiters=(pid,), note=note)


EVENTFD = "anon_inode:[eventfd]"  # an eventfd in /proc/PID/fd; which one, its fdinfo's eventfd-id where the kernel says
# What lets the kernel itself write an eventfd a process holds, with no other process holding it: an io_uring or an
# AIO context it registered the eventfd with, a device's driver (a GPU's, KVM's, VFIO's irqfd), cgroup v1's notifier.
KERNEL_WRITERS = ("anon_inode:[io_uring]", "anon_inode:kvm", "anon_inode:[vfio", "/dev/")
QUIET_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/pts/", "/dev/tty", "/dev/shm/")  # noqa: S108 - a prefix


def reads_eventfd(t: ThreadSample) -> bool:
    """Blocked reading an eventfd whose count is zero (a wake-up fd: only a write by a holder of it ends the read)."""
    return t.state == "S" and t.syscall in sg.READ_SYSCALLS and t.fd is not None and t.fd_target == EVENTFD


def _kernel_writer(pid: int) -> str | None:
    """Why the kernel may write an eventfd ``pid`` holds (``KERNEL_WRITERS`` among its fds, an AIO context's ring in
    its maps), in words; None where nothing was found. An fd table that cannot be read is said, never taken as none."""
    try:
        fds = os.listdir(proc.PROC / str(pid) / "fd")
    except OSError:
        return "its fd table could not be read to see what else may write it"
    for fd in fds:
        try:
            target = os.readlink(proc.PROC / str(pid) / "fd" / fd)
        except OSError:
            continue
        if target.startswith(KERNEL_WRITERS) and not target.startswith(QUIET_DEVICES):
            return f"the kernel may write it too: the process holds {target}"
    maps = proc.read_text(proc.PROC / str(pid) / "maps") or ""
    return (
        "the kernel may write it too: the process has an AIO context ([aio] in its maps)" if "/[aio]" in maps else None
    )


def eventfd_wait(
    pid: int,
    t: ThreadSample,
    job: dict[int, list[ProcessSample]],
    py_spy: str | None,
    now: float,
    fd: int | None = None,
) -> LockWait | None:
    """What a read of an eventfd waits for: a write by any process that holds the same eventfd (its fdinfo's
    eventfd-id), the waiter itself among them; a holder's exit does not end the read (an eventfd has no end of file).
    None where the kernel does not say which eventfd it is."""
    fd = t.fd if fd is None else fd
    key = fdinfo_value(pid, fd, EVENTFD, "eventfd-id") if fd is not None else None
    if key is None:
        return None

    def holds(other: int, f: str) -> bool:
        return fdinfo_value(other, int(f), EVENTFD, "eventfd-id") == key

    found, complete = host_holders(sorted(job), holds, PIPE_SCAN_S)
    how = f"holds the same eventfd (its /proc/PID/fdinfo's eventfd-id {key})"
    holders = tuple(holder(w, job, py_spy, now, how, name=None) for w in found if w != pid)
    note = None if complete else _searched()
    kernel = _kernel_writer(pid)
    if kernel is not None:  # (then not a wait only its own process could end)
        note = kernel + (f"; {note}" if note else "")
    elif pid in found:
        note = "the waiter itself holds the eventfd" + (f"; {note}" if note else "")
    return LockWait(
        t.tid, "eventfd", f"an eventfd (eventfd-id {key})", False, holders=holders, waiters=(pid,), note=note
    )


def reads_timerfd(t: ThreadSample) -> bool:
    """Blocked reading a timerfd (only its timer, or a holder that arms it again, ends the read)."""
    return t.state == "S" and t.syscall in sg.READ_SYSCALLS and t.fd is not None and t.fd_target == sg.TIMERFD


# A timerfd's read is followed to its holders where it is disarmed, or fires this far off at least (a short timer is a
# sleep: followed, it cost a search of the host's files at each look)
TIMER_FOLLOWED_S = 300.0


def anon_wait(
    pid: int, t: ThreadSample, job: dict[int, list[ProcessSample]], py_spy: str | None, now: float
) -> LockWait | None:
    """What a read of a timerfd, or an epoll_wait on an epoll that watches no file, waits for beside its timer: a
    holder of the same open file (the kernel's kcmp says which) arming the timer again (timerfd_settime), or adding a
    file to the epoll (epoll_ctl); the waiter itself among them. None where it is neither, or the kernel does not
    say which processes share it (then no wait on holders is drawn)."""
    epfd = epoll_of(pid, t.tid) if t.syscall in POLL_CALLS else None
    if epfd is not None and epoll_watches(pid, epfd) == 0:
        fd, target, kind, what = epfd, EPOLL, "epoll", "an epoll instance that watches no file"
    elif (
        reads_timerfd(t)
        and t.fd is not None
        and (left := timerfd_left(pid, t.fd)) is not None
        and (not left or left >= TIMER_FOLLOWED_S)
        and timer_is_steady(pid, t.fd)
    ):
        fd, target, kind = t.fd, sg.TIMERFD, "timerfd"
        what = "a timerfd" if left else "a timerfd that is disarmed"
    else:
        return None
    unsure: list[int] = []

    def holds(other: int, f: str) -> bool:
        try:
            if os.readlink(proc.PROC / str(other) / "fd" / f) != target:
                return False
        except OSError:
            return False
        same = same_file(pid, fd, other, int(f))
        if same is None:
            unsure.append(other)  # (not said which: counted as a holder, so no proof rests on its absence)
        return same is not False

    found, complete = host_holders(sorted(job), holds, PIPE_SCAN_S)
    if pid in unsure:
        return None  # the kernel says nothing of which file it is, even of the waiter's own
    how, unread = f"holds the same {kind} (the kernel's kcmp says so)", f"holds a {kind} kcmp could not compare"
    holders = tuple(holder(w, job, py_spy, now, unread if w in unsure else how, name=None) for w in found if w != pid)
    notes = [f"the waiter itself holds the {kind}"] if pid in found else []
    notes += [] if complete else [_searched()]
    return LockWait(t.tid, kind, what, t.timeout, holders=holders, waiters=(pid,), note="; ".join(notes) or None)


PIDFD = "anon_inode:[pidfd]"  # a process's file descriptor (pidfd_open, asyncio's child watcher from Python 3.12)


def pidfd_wait(
    pid: int, t: ThreadSample, job: dict[int, list[ProcessSample]], py_spy: str | None, now: float, fd: int
) -> LockWait | None:
    """What a poll of a pidfd waits for: the exit of the process it refers to (its fdinfo's ``Pid:``), the one holder
    that ends it, by exiting. None where it is no pidfd, or refers to no process alive (the poll would not block)."""
    target = fdinfo_value(pid, fd, PIDFD, "Pid") or ""
    if not target.isdigit() or int(target) in (0, pid) or (proc.PROC / str(pid) / "task" / target).exists():
        return None  # (a pidfd of one of its own threads, PIDFD_THREAD: not a process's exit)
    how = f"is the process its pidfd refers to (/proc/PID/fdinfo's Pid: {target}): its exit ends the wait"
    return LockWait(
        t.tid,
        "pidfd",
        f"a pidfd of pid {target}",
        False,
        holders=(holder(int(target), job, py_spy, now, how, name=None),),
        waiters=(pid,),
    )


PTY_MASTERS = ("/dev/ptmx", "/dev/pts/ptmx")  # a pseudo-terminal's master end in /proc/PID/fd (a container's too)
PTY_SLAVE = "/dev/pts/"


def tty_io(t: ThreadSample) -> bool:
    """Blocked reading a pseudo-terminal (``/dev/pts/N``), or writing to one whose buffer is full."""
    return (
        t.state == "S"
        and t.syscall in sg.READ_SYSCALLS | sg.WRITE_SYSCALLS
        and t.fd is not None
        and (t.fd_target or "").startswith(PTY_SLAVE)
        and (t.fd_target or "")[len(PTY_SLAVE) :].split(" ", 1)[0].isdigit()  # (not a container's /dev/pts/ptmx)
    )


def _tty_index(pid: int, fd: str) -> int | None:
    """The index N of the pty whose master ``pid``'s ``fd`` is (its fdinfo's ``tty-index``), or None."""
    for line in (proc.read_text(proc.PROC / str(pid) / "fdinfo" / fd) or "").splitlines():
        if line.startswith("tty-index:"):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None


def _master_of(pid: int, fd: str, index: int) -> bool:
    """Whether ``pid``'s ``fd`` is the master end of ``/dev/pts/<index>``."""
    try:
        master = os.readlink(proc.PROC / str(pid) / "fd" / fd) in PTY_MASTERS
    except OSError:
        return False
    return master and _tty_index(pid, fd) == index


def pty_masters(index: int, first: list[int], budget_s: float = PIPE_SCAN_S) -> tuple[list[int], bool]:
    """The processes holding the master end of ``/dev/pts/<index>``, the job's first (``_holders``)."""
    return host_holders(first, lambda pid, fd: _master_of(pid, fd, index), budget_s)


def pty_wait(
    pid: int, t: ThreadSample, job: dict[int, list[ProcessSample]], py_spy: str | None, now: float
) -> LockWait | None:
    """A thread blocked on a pseudo-terminal whose master end a process of the job holds (pexpect, pty.spawn, a
    launcher that gives its child a terminal): it reads what only that process could write, or its write waits for
    that process to read (the pty's buffer holds about 4 KiB). A pipe's wait in all but name, so its kinds. A master
    held outside the job is a terminal's (tmux, sshd, an emulator: a person's), not followed here. The job's own
    processes are always searched; a master found there is followed though the rest of the host was not searched to
    the end (a busy host: as a pipe's, said in the note), never taken for a terminal's."""
    target = proc.fd_target(pid, t.fd) if t.fd is not None else None
    if not target or not target.startswith(PTY_SLAVE) or not target[len(PTY_SLAVE) :].isdigit():
        return None
    found, complete = pty_masters(int(target[len(PTY_SLAVE) :]), sorted(job))
    if not found or any(w not in job for w in found):
        return None  # a master outside the job (a terminal's, a helper's that left the tree)
    reading = t.syscall in sg.READ_SYSCALLS
    how = "holds the pty's master end (its /proc/PID/fd and fdinfo's tty-index)"
    holders = tuple(holder(w, job, py_spy, now, how, name=None) for w in found if w != pid)
    note = None if complete else _searched()
    if pid in found:
        note = "the waiter itself holds the pty's master end too" + (f"; {note}" if note else "")
    kind = "pipe" if reading else "pipe_full"
    return LockWait(t.tid, kind, sg.PTY_PATH + target, False, holders=holders, waiters=(pid,), note=note)


FIFO_WCHAN = "wait_for_partner"  # the kernel's wait channel of an open() of a FIFO that waits for the other side


def fifo_open_wait(pid: int, t: ThreadSample) -> LockWait | None:
    """A thread in ``open()`` of a FIFO: the open returns when some process opens it the other way, and no process
    has it open that way now (else it would have returned). Who may come cannot be known: no holder is said."""
    got = opening(pid, t.tid)
    if got is None:
        return None
    path, flags = got
    reading = flags & O_ACCMODE == 0
    other = "write" if reading else "read"
    note = f"opened to {'read' if reading else 'write'}, it returns only when a process opens it to {other}"
    return LockWait(t.tid, "fifo_open", path, False, waiters=(pid,), note=note)


def reads_pipe(t: ThreadSample) -> bool:
    """Blocked reading a pipe, or writing to a full one (standard input too: its writers, in the job or outside it,
    `cat data |`, a launcher, are followed like any pipe's; only a terminal is a person's)."""
    return (
        t.state == "S"
        and t.syscall in sg.READ_SYSCALLS | sg.WRITE_SYSCALLS
        and t.fd is not None
        and t.fd_target == "pipe"
    )


def reads_stdin(pid: int, fd: int | None, reading: bool) -> bool:
    """A read of the process's standard input, by fd 0 or by another fd open on the same pipe (``/dev/stdin``
    opened again, as torch.distributed.breakpoint() does for its prompt; a dup)."""
    if not reading or fd is None:
        return False
    if fd == 0:
        return True
    target = proc.fd_target(pid, fd)
    return target is not None and target == proc.fd_target(pid, 0)


POLL_CALLS = frozenset({"poll", "ppoll", "epoll_wait", "epoll_pwait", "select", "pselect6"})


MAX_FOLLOWED_FILES = 8  # the files of one poll followed to their holders, at most


POLL_FOLLOWED_S = 12 * 3600.0  # a poll's timeout at least this far off is followed as if it had none


def polls_forever(t: ThreadSample) -> bool:
    """Asleep in poll()/ppoll()/epoll_wait() with no timeout (subprocess's communicate(), a selector or an event
    loop with no timeout), or with one at least POLL_FOLLOWED_S away (asyncio's loop polls for at most a day when
    its next timer is further off): the graph weighs that timeout against the job's own bounds."""
    return (
        t.state == "S"
        and t.syscall in POLL_CALLS
        and (t.timeout is False or (t.wakes_in is not None and t.wakes_in >= POLL_FOLLOWED_S))
    )


def poll_waits(
    pid: int, t: ThreadSample, job: dict[int, list[ProcessSample]], py_spy: str | None, now: float
) -> list[LockWait]:
    """A poll (or epoll) with no timeout on pipes and local sockets: one wait per fd it polls (reading: its writers,
    or the socket's other end; writing: its readers). The poll ends when any of them is ready: the graph follows
    the one that decides. One fd whose other end cannot be followed (a timer, a listening or a remote socket,
    standard input) may end it too: then none is said, and the poll is not a wait on a holder."""
    out: list[LockWait] = []
    polled = polled_fds(pid, t.tid) or []
    if len(polled) > MAX_FOLLOWED_FILES:
        return []  # (following each costs a search of the host's fds: a poll of many files is no wait on a holder)
    for fd, reading in polled:
        if reads_stdin(pid, fd, reading):
            return []  # standard input: polled, not read (a prompt library's event loop), its writers not followed
        wait = (
            pipe_wait(pid, t, job, py_spy, now, fd=fd, reading=reading)
            or socket_wait(pid, t, job, py_spy, now, fd=fd, reading=reading)
            or (eventfd_wait(pid, t, job, py_spy, now, fd=fd) if reading else None)
            or (pidfd_wait(pid, t, job, py_spy, now, fd) if reading else None)
        )
        if wait is None:
            return []
        note = "; ".join(n for n in (wait.note, POLLED) if n)
        out.append(replace(wait, note=note, timeout=t.timeout is not False))  # a timed poll's: the graph weighs it
    return out
