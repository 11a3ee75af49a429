"""Reading /proc and walking a job's process tree.

Everything here reads; nothing signals or attaches. Missing data (permission, a process that
exits mid-read) comes back as ``None``, never as an exception.
"""

from __future__ import annotations

import os
import stat
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from hangwatch.capture.roles import is_launcher
from hangwatch.launcher import is_supervisor_command
from hangwatch.records.values import frozen, mutable
from hangwatch.redact import redact_argv

if TYPE_CHECKING:
    pass

PROC = Path("/proc")

# Processes a job never belongs to: we stop climbing the tree when we reach one.
SHELL_COMMS = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "fish",
        "dash",
        "tmux: server",
        "tmux",
        "screen",
        "sshd",
        "systemd",
        "init",
        "login",
        "su",
        "sudo",
        "srun",
        "slurmstepd",
        "docker-init",
        "tini",
        "dumb-init",
        "containerd-shim",
    }
)
# Environment keys the rules read. Nothing else of a target's environment is kept (secrets).
ENV_KEYS = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
    "PYTHONUNBUFFERED",
    "TOKENIZERS_PARALLELISM",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "TORCHINDUCTOR_COMPILE_THREADS",
    "TORCHDYNAMO_DISABLE",
    "CUDA_VISIBLE_DEVICES",
    "HANGWATCH_RUN_DIR",
    "HANGWATCH_ATTEMPT",
    "HANGWATCH_HEARTBEAT_DIR",
    "HANGWATCH_SUPERVISOR_PID",
    "NODE_RANK",
)
# The supervisor's pid, which `hangwatch run` puts in the job's environment (the job's processes inherit it).
SUPERVISOR_ENV = "HANGWATCH_SUPERVISOR_PID"


@frozen
class Stat:
    """The fields of /proc/PID/stat (or task/TID/stat) that capture uses."""

    comm: str
    state: str
    ppid: int
    pgid: int
    sid: int
    utime: int
    stime: int
    num_threads: int
    starttime: int
    exit_code: int | None = None  # a zombie's exit status as waitpid reports it (field 52, Linux 3.5 and later)
    reaped_ticks: int = 0  # cutime + cstime: the CPU of the children it has waited for (their I/O joins its own)


def read_text(path: Path) -> str | None:
    """A file's text, or None where unreadable."""
    try:
        with open(path, "rb") as f:  # binary + decode: half the cost of read_text, which runs per pid per poll
            return f.read().decode(errors="replace")
    except OSError:
        return None


def _read_small(path: Path) -> str | None:
    """A /proc file of one short line (a stat file: well under a page), in one read; None where unreadable.
    A third cheaper than ``read_text``: the scan of the job's tree reads every pid's stat file every round."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 4096).decode(errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


# The users whose processes this hangwatch may read (None: every user's). The agent's watches (`hangwatch attach`
# started by `hangwatch agent`) are limited to their job's owner: an agent running as root on a shared node must not
# become a way to read another user's processes. Of any other process, only the owner of its /proc directory is
# looked at: it is left out of every walk and scan, and the readers below answer as for a process that is gone.
_READABLE_USERS: list[frozenset[int] | None] = [None]
# The job's tree as of the last walk (job_members): readable whoever owns a process of it (a setuid helper the job ran,
# a process that made itself not dumpable), so that none of the job's own processes reads as gone. The walk itself
# reads every process's /proc/PID/stat (what `ps` shows every user: parent, group, state) to find the tree.
_JOB_TREE: list[frozenset[int]] = [frozenset()]


def read_only_users(uids: set[int] | None) -> None:
    """From now on, only the processes of ``uids`` are read (None: every user's)."""
    _READABLE_USERS[0] = frozenset(uids) if uids is not None else None


def narrowed() -> bool:
    """Whether only some users' processes are read: a search of the machine is then not complete."""
    return _READABLE_USERS[0] is not None


def owner_of(pid: int) -> int | None:
    """The owner of /proc/PID (its effective user, or root where it is not dumpable), from the directory alone;
    None when it is gone."""
    try:
        return os.stat(f"{PROC}/{pid}").st_uid
    except OSError:
        return None


def may_read(pid: int) -> bool:
    """Whether this hangwatch may read process ``pid``'s files (always, unless ``read_only_users`` was called: then
    its users' processes and the job's tree)."""
    users = _READABLE_USERS[0]
    return users is None or pid in _JOB_TREE[0] or owner_of(pid) in users


def unreadable(pid: int) -> bool:
    """A process that exists and that this hangwatch may not read (another user's, under the agent); a gone one is
    not: it is gone."""
    return not may_read(pid) and owner_of(pid) is not None


def _allowed(path: Path) -> bool:
    users = _READABLE_USERS[0]
    if users is None:
        return True
    parts = path.parts  # /proc/PID/... (or /proc/PID/task/TID/...)
    return len(parts) < 3 or not parts[2].isdigit() or may_read(int(parts[2]))


def read_stat(path: Path) -> Stat | None:
    """The fields capture uses of a /proc stat file, or None where unreadable."""
    return parse_stat(_read_small(path)) if _allowed(path) else None


def _family(raw: str | None) -> tuple[int, int, int] | None:
    """(ppid, pgid, sid) of a stat file's text, and nothing else parsed (the walk reads every pid's)."""
    if not raw:
        return None
    fields = raw[raw.rfind(")") + 2 :].split(None, 4)
    try:
        return int(fields[1]), int(fields[2]), int(fields[3])
    except (IndexError, ValueError):
        return None


def parse_stat(raw: str | None) -> Stat | None:
    """The fields capture uses of a /proc stat file's text, or None."""
    if not raw:
        return None
    # comm may hold spaces and parentheses: split at the last ')'.
    lpar, rpar = raw.find("("), raw.rfind(")")
    fields = raw[rpar + 2 :].split()
    try:
        return Stat(
            comm=raw[lpar + 1 : rpar],
            state=fields[0],
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            utime=int(fields[11]),
            stime=int(fields[12]),
            num_threads=int(fields[17]),
            starttime=int(fields[19]),
            exit_code=int(fields[49]) if len(fields) > 49 else None,
            reaped_ticks=int(fields[13]) + int(fields[14]),
        )
    except (IndexError, ValueError):
        return None


def read_environ(pid: int) -> dict[str, str]:
    """The keys of ENV_KEYS present in the target's environment (never anything else)."""
    if not may_read(pid):
        return {}
    try:
        raw = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        k = key.decode(errors="replace")
        if sep and k in ENV_KEYS:
            out[k] = value.decode(errors="replace")
    return out


def read_cmdline(pid: int) -> tuple[str, ...]:
    """A process's argv, redacted (empty where unreadable)."""
    if not may_read(pid):
        return ()
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ()
    return tuple(redact_argv(a.decode(errors="replace") for a in raw.split(b"\0") if a))


def fd_target(pid: int, fd: int) -> str | None:
    """What a file descriptor points to (a path, ``socket:[inode]``, ``pipe:[...]``), or None."""
    if not may_read(pid):
        return None
    try:
        return os.readlink(PROC / str(pid) / "fd" / str(fd))
    except OSError:
        return None


def file_size(path: str | None) -> int | None:
    """A file's size in bytes, or None."""
    if not path or not path.startswith("/") or path.startswith("/dev/"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def read_ctx_switches(status_path: Path) -> int | None:
    """Voluntary + involuntary context switches of a task, from its status file (None where unreadable)."""
    raw = read_text(status_path)
    if raw is None:
        return None
    total, seen = 0, 0
    for line in raw.splitlines():
        if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
            value = line.split(":", 1)[1].strip()
            if value.isdigit():
                total += int(value)
                seen += 1
    return total if seen else None


def read_signals(pid: int) -> tuple[int | None, tuple[int, ...] | None]:
    """The signals process ``pid`` has a handler for (``SigCgt`` of its status: bit n-1 for signal n), and those its
    POSIX timers (timer_create: ``flock -w``'s, coreutils ``timeout``'s) send it, as ``/proc/PID/timers`` lists them:
    on a wall or monotonic clock (not a CPU-time one, which a blocked process never advances), to the process or its
    main thread (``notify: signal/pid.N``, ``signal/tid.PID``), neither ignored (``SigIgn``) nor blocked by its main
    thread (``SigBlk``); each None where unreadable (the timers file: a kernel built without it). Not when they fire:
    the file shows no time."""
    status = dict(
        line.split(":", 1) for line in (read_text(PROC / str(pid) / "status") or "").splitlines() if ":" in line
    )
    try:
        caught, left_out = int(status["SigCgt"], 16), int(status["SigIgn"], 16) | int(status["SigBlk"], 16)
    except (KeyError, ValueError):
        return None, None
    raw = read_text(PROC / str(pid) / "timers")
    timers: list[dict[str, str]] = []
    for line in (raw or "").splitlines():
        key, _, value = line.partition(":")
        if key == "ID":
            timers.append({})
        elif timers:
            timers[-1][key] = value.strip()
    numbers = (
        t.get("signal", "").split("/", 1)[0]
        for t in timers
        if t.get("ClockID") in WALL_CLOCKS and (t.get("notify") in (f"signal/pid.{pid}", f"signal/tid.{pid}"))
    )
    signals = {int(n) for n in numbers if n.isdigit() and 0 < int(n) <= 64 and not left_out >> (int(n) - 1) & 1}
    return caught, tuple(sorted(signals)) if raw is not None else None


WALL_CLOCKS = frozenset({"0", "1", "7", "8", "9", "11"})  # REALTIME, MONOTONIC, BOOTTIME (and _ALARM), TAI


def tracer_of(pid: int) -> int | None:
    """The pid of the process that traces ``pid`` (``TracerPid`` of its status: a debugger, strace, py-spy), or None
    where none does or it is unreadable."""
    raw = read_text(PROC / str(pid) / "status")
    for line in (raw or "").splitlines():
        if line.startswith("TracerPid:"):
            value = line.split(":", 1)[1].strip()
            return int(value) if value.isdigit() and value != "0" else None
    return None


# Threads that answer hangwatch's own requests (torch's debug server sends the flight recorder's dump we asked
# for; our FIFO reader, where the socket path is too long): what they move is our look, not the job's work.
# Names as /proc writes them (15 bytes at most).
SERVING_THREADS = ("pt_workerserver", "hangwatch-flight"[:15])


def _io_counters(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in (read_text(path) or "").splitlines():
        k, _, v = line.partition(":")
        if v.strip().isdigit():
            out[k.strip()] = int(v)
    return out


@mutable
class _IoBook:
    """What a process's threads had moved at the last reading, for a process with a thread serving our requests."""

    tids: frozenset[int]  # its live threads then
    dead: dict[str, int]  # what its exited threads moved, less what exited serving threads moved
    serving: dict[int, dict[str, int]]  # each serving thread's counters then
    served: dict[str, int]  # what its exited serving threads had moved when last seen
    whole: dict[str, int]  # /proc/PID/io then (counters that went down: the pid is another process's)


_IO_BOOKS: dict[int, _IoBook] = {}
IO_BOOKS_KEPT = 512


def read_io(pid: int, serving: tuple[int, ...] | None = None) -> dict[str, int]:
    """The /proc/PID/io counters (empty where unreadable), less what the threads serving hangwatch's own
    requests moved (``serving``: their tids, when the caller has read the tasks; else found here).

    A serving thread may move gigabytes a second while the counters are read, so it is not taken off the whole:
    the job's share is the sum of its other live threads' counters, plus what its exited threads moved (the whole
    less every live thread: the kernel keeps an exited thread's counters in the process's), read again only when
    a thread came or went, less what exited serving threads had moved when last seen."""
    tids = serving_threads(pid) if serving is None else serving
    if not tids and pid not in _IO_BOOKS:
        return _io_counters(PROC / str(pid) / "io")
    task = PROC / str(pid) / "task"
    try:
        live = frozenset(int(t) for t in os.listdir(task))
    except (OSError, ValueError):
        _IO_BOOKS.pop(pid, None)
        return {}
    per = {tid: _io_counters(task / str(tid) / "io") for tid in live}
    whole = _io_counters(PROC / str(pid) / "io")
    if not whole:
        _IO_BOOKS.pop(pid, None)
        return whole
    book = _IO_BOOKS.get(pid)
    if book is not None and any(whole.get(k, 0) < v for k, v in book.whole.items()):
        book = None  # counters went down: a new process under an old pid
    serving_now = {tid: per[tid] for tid in tids if per.get(tid)}
    if book is None or live != book.tids:
        served = dict(book.served) if book is not None else {}
        for t, c in book.serving.items() if book is not None else ():
            if t not in live:
                served = {k: served.get(k, 0) + c.get(k, 0) for k in whole}
        dead = {k: max(0, v - sum(c.get(k, 0) for c in per.values()) - served.get(k, 0)) for k, v in whole.items()}
        if book is not None:  # what exited threads moved never goes down (a racy reading is not taken back)
            dead = {k: max(v, book.dead.get(k, 0)) for k, v in dead.items()}
        book = _IoBook(live, dead, {}, served, whole)
    book.serving, book.whole = serving_now, whole
    _IO_BOOKS.pop(pid, None)
    _IO_BOOKS[pid] = book
    while len(_IO_BOOKS) > IO_BOOKS_KEPT:
        del _IO_BOOKS[next(iter(_IO_BOOKS))]
    return {k: book.dead.get(k, 0) + sum(c.get(k, 0) for t, c in per.items() if t not in serving_now) for k in whole}


def serving_threads(pid: int) -> tuple[int, ...]:
    """The tids of ``pid``'s threads that serve hangwatch's own requests (SERVING_THREADS)."""
    try:
        tids = os.listdir(PROC / str(pid) / "task")
    except OSError:
        return ()
    return tuple(
        int(t) for t in tids if (read_text(PROC / str(pid) / "task" / t / "comm") or "").strip() in SERVING_THREADS
    )


def exe_of(pid: int) -> str | None:
    """The executable of a process, or None."""
    if not may_read(pid):
        return None
    try:
        return os.readlink(PROC / str(pid) / "exe")
    except OSError:
        return None


_PYTHON_NAMES = ("python", "pypy")


def looks_like_python(pid: int, exe: str | None) -> bool:
    """Python if the executable is named python*, or libpython is mapped (embedded interpreters).

    Another user's exe and maps are unreadable (and a process that may not be traced shows empty maps): then
    the (world-readable) command line decides, so that the stack attempt is made and its permission error
    reaches the user.
    """
    if exe and Path(exe).name.startswith(_PYTHON_NAMES):
        return True
    maps = read_text(PROC / str(pid) / "maps")
    if maps and "libpython" in maps:
        return True
    # Empty maps (no ptrace access), or an interpreter with libpython linked in (Debian's python3): the
    # command line's program name decides.
    argv0 = read_cmdline(pid)[:1]
    return bool(argv0) and Path(argv0[0]).name.startswith(_PYTHON_NAMES)


def _every_pid() -> list[int]:
    return [int(name) for name in os.listdir(PROC) if name.isdigit()]  # listdir: 3x faster than Path


def list_pids() -> list[int]:
    """Every pid on the machine (of the users ``read_only_users`` allows, and the job's tree: the rest are not read)."""
    pids = _every_pid()
    return pids if _READABLE_USERS[0] is None else [p for p in pids if may_read(p)]


@frozen
class JobMember:
    """A process found to belong to the job, with what capture needs to know of it."""

    pid: int
    orphan: bool  # found by process group/session, not as a descendant of the root
    stat: Stat | None = field(default=None, compare=False)  # its stat file as the walk read it


def is_supervisor(pid: int, cmdline: tuple[str, ...], child: int) -> bool:
    """Whether ``pid`` is a hangwatch supervising ``child``: the job's environment names its supervisor's
    pid, or the process runs hangwatch's own entry point (an older run, or the environment unreadable).
    Never a word in a path: a venv or project folder named after hangwatch is not the supervisor."""
    named = read_environ(child).get(SUPERVISOR_ENV)
    if named is not None and named == str(pid):
        return True
    return is_supervisor_command(cmdline)


def find_root(pid: int) -> int:
    """Climb from any process of a job to the job's top process.

    We climb while the parent is a Python process or a launcher in the same session, or a
    launcher in any session (torchrun puts each rank in a session of its own). We stop at shells,
    terminals, init and anything else that is not part of a training job.
    """
    cur = pid
    for _ in range(64):  # bounded: trees are not that deep
        st = read_stat(PROC / str(cur) / "stat")
        if st is None or st.ppid <= 1:
            return cur
        parent = st.ppid
        pst = read_stat(PROC / str(parent) / "stat")
        if pst is None or pst.comm in SHELL_COMMS:
            return cur
        pcmd = read_cmdline(parent)
        if is_supervisor(parent, pcmd, cur):
            return cur  # the supervisor is not part of the job
        if is_launcher(pst.comm, pcmd):
            cur = parent
            continue
        if pst.sid == st.sid and looks_like_python(parent, exe_of(parent)):
            cur = parent
            continue
        return cur
    return cur


def job_members(root: int, session: int | None = None) -> list[JobMember]:
    """The root, its descendants, and processes of its process group/session that lost their parent.
    ``session``: the root's session as first seen, so that once the root is gone (reaped) the orphans of
    its session are still found (a worker forked just before the root died).

    One pass over /proc (each stat file read once): this runs every poll of the supervisor.
    """
    me = os.getpid()
    raws: dict[int, str] = {}
    family: dict[int, tuple[int, int, int]] = {}  # pid -> (ppid, pgid, sid)
    children: dict[int, list[int]] = {}
    for pid in _every_pid():  # (each stat file: what `ps` shows every user)
        raw = _read_small(PROC / str(pid) / "stat")
        fam = _family(raw)
        if raw and fam is not None:
            raws[pid], family[pid] = raw, fam
            children.setdefault(fam[0], []).append(pid)
    descendants, i = [root], 0
    while i < len(descendants):  # breadth first from the root
        descendants.extend(c for c in children.get(descendants[i], ()) if c != me)
        i += 1
    members = [JobMember(p, orphan=False, stat=parse_stat(raws.get(p))) for p in descendants]
    rst = family.get(root)
    if rst is None and session is None:
        return _tree(members)
    known = set(descendants)
    for pid, (ppid, pgid, sid) in family.items():
        if pid in known or pid == me or ppid != 1:
            continue
        # An orphan of this job: reparented to init, still in the job's process group, or in the
        # session the root leads. Other jobs of the same terminal have other process groups.
        if rst is None:
            same_group, same_session = False, sid == session and session == root
        else:
            same_group = pgid == rst[1] == root  # the root leads its group (`run`'s jobs do; one attached to may not)
            same_session = sid == rst[2] and rst[2] == root
        if same_group or same_session:
            members.append(JobMember(pid, orphan=True, stat=parse_stat(raws[pid])))
    return _tree(members)


def _tree(members: list[JobMember]) -> list[JobMember]:
    """``members``, remembered as the job's tree where only some users' processes are read (``may_read``)."""
    if _READABLE_USERS[0] is not None:
        _JOB_TREE[0] = frozenset(m.pid for m in members)
    return members


def main_pid_of(root: int, members: list[JobMember]) -> int:
    """The job's main process: the root, or under a non-Python root (``bash train.sh``, ``srun``)
    its first Python descendant."""
    if looks_like_python(root, exe_of(root)):
        return root
    for m in sorted(members, key=lambda m: m.pid):
        if not m.orphan and m.pid != root and looks_like_python(m.pid, exe_of(m.pid)):
            return m.pid
    return root


def int_or_none(v: str | None) -> int | None:
    """``int(v)``, or None for a missing or malformed value."""
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


_BOOT: list[float] = []


def boot_time() -> float | None:
    """When the machine booted (unix time), for start times in clock ticks; None where unreadable."""
    if not _BOOT:
        for line in (read_text(PROC / "stat") or "").splitlines():
            if line.startswith("btime "):
                _BOOT.append(float(line.split()[1]))
    return _BOOT[0] if _BOOT else None


def started_at(ticks: float) -> float | None:
    """A start time in clock ticks after boot as unix time."""
    boot = boot_time()
    return None if boot is None else boot + ticks / os.sysconf("SC_CLK_TCK")


MAX_WRITING_FDS = 256  # fds looked at when naming the files a process writes


def files_open_for_writing(pid: int) -> list[tuple[str, int]]:
    """(path, size) of the regular files ``pid`` has open for writing (its log and output included),
    largest first; empty where unreadable."""
    base = PROC / str(pid)
    try:
        fds = os.listdir(base / "fd")[:MAX_WRITING_FDS]
    except OSError:
        return []
    out = []
    for fd in fds:
        flags = next(
            (ln.split()[1] for ln in (read_text(base / "fdinfo" / fd) or "").splitlines() if ln.startswith("flags:")),
            None,
        )
        if flags is None or not int(flags, 8) & (os.O_WRONLY | os.O_RDWR):
            continue
        target = fd_target(pid, int(fd))
        size = file_size(target)
        if target is not None and size is not None:
            out.append((target, size))
    return sorted(set(out), key=lambda x: -x[1])
