"""The wait-for view: what a blocked thread waits for, and who holds it, across processes.

- File locks (flock, POSIX, OFD): a thread blocked in ``flock``/``fcntl(F_SETLKW)``, or polling in the
  ``filelock`` package's acquire (a sleep around a non-blocking flock: its frame's locals name the file).
  The kernel lists every lock in ``/proc/locks`` with its holder's pid; an OFD lock (pid -1) or a holder
  whose pid is stale is found through ``/proc/PID/fdinfo``'s ``lock:`` lines.
- ``multiprocessing`` locks and semaphores: a futex wait on an address inside a shared mapping of
  ``/dev/shm/sem.*``. Who else maps that semaphore (its sharers), which of them wait for it, and its
  count (read from the waiter's memory) are measured; the holder is named only when a frame shows it
  (``with lock:`` around its line), else inferred (a sharer that does not wait for it), and said so.

- Pipes: a thread blocked in ``read`` on a pipe waits for whoever holds its write end. Every process with that
  pipe open for writing (``/proc/PID/fd`` and the access mode in ``fdinfo``) is a holder: the job's processes
  first, then the host's, within PIPE_SCAN_S. A holder that left the job's tree is named like any other.

Everything here reads; a holder outside the job's tree is read in non-blocking mode and never touched.
"""

from __future__ import annotations

import linecache
import os
import pwd
import re
import struct
import subprocess
import time
from dataclasses import dataclass, replace

from hangwatch import signatures as sg
from hangwatch.capture import proc
from hangwatch.capture.sockpeer import peer_inode
from hangwatch.capture.source import held_locks
from hangwatch.capture.stacks import PY_SPY_ENV, dump_command, dump_stacks
from hangwatch.capture.syscalls import opening, polled_fds, read_blocked_call
from hangwatch.records.evidence import (
    POLLED,
    UNREAD,
    Frame,
    LockHolder,
    LockWait,
    ProcessInfo,
    ProcessSample,
    ThreadSample,
)
from hangwatch.redact import redact_text

LOCKS = proc.PROC / "locks"
SEM_MAPPING = "/dev/shm/sem."  # noqa: S108 - a name we look for in /proc/PID/maps, not a file we write. glibc's named semaphores (multiprocessing's SemLock on Linux)
FILELOCK_DIR = "/filelock/"  # the filelock package (Hugging Face datasets, hub, transformers use it)
FILELOCK_PATH_LOCALS = ("lock_filename", "canonical_path", "lock_file")
FILELOCK_WAIT = re.compile(r"^\((?:True|False), [^,]+, (-?[\d.]+)")
LOOK_S = 0.5  # a holder outside the job is read twice this far apart: does it work?
LOCALS_TIMEOUT_S = 3.0
MAX_FD_SCAN_PIDS = 4096  # bounded: an OFD lock's holder is looked for in at most this many processes
PIPE_SCAN_S = 0.5  # bounded: a pipe's writers are looked for on the host for at most this long
O_ACCMODE, O_WRONLY, O_RDWR = 0o3, 0o1, 0o2
DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)")
LOCK_NAME = re.compile(r"^\s*(?:with\s+([\w.\[\]()]+)|.*?\b([\w.\[\]]+)\.acquire\()")


@dataclass(frozen=True)
class LockEntry:
    """One line of /proc/locks."""

    kind: str  # FLOCK, POSIX, OFDLCK, LEASE, DELEG
    mode: str  # READ, WRITE
    pid: int  # -1 for OFD locks
    key: tuple[int, int, int]  # (major, minor, inode) of the locked file
    waiting: bool  # a "->" line: this one waits for the lock

    @property
    def kind_word(self) -> str:
        """``flock``, ``posix`` or ``ofd``."""
        return {"FLOCK": "flock", "POSIX": "posix", "OFDLCK": "ofd"}.get(self.kind, self.kind.lower())


def parse_locks(text: str) -> list[LockEntry]:
    """The entries of /proc/locks (or of fdinfo ``lock:`` lines)."""
    out = []
    for line in text.splitlines():
        parts = line.replace("lock:", "").split()
        if len(parts) < 6:
            continue
        waiting = parts[1] == "->"
        f = parts[2:] if waiting else parts[1:]
        try:
            major, minor, inode = f[4].split(":")
            out.append(LockEntry(f[0], f[2], int(f[3]), (int(major, 16), int(minor, 16), int(inode)), waiting))
        except (ValueError, IndexError):
            continue
    return out


def file_key(path: str) -> tuple[int, int, int] | None:
    """(major, minor, inode) of a file, as /proc/locks names it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return os.major(st.st_dev), os.minor(st.st_dev), st.st_ino


def lock_name(code: str | None) -> str | None:
    """The lock a source line takes, by its last name (``with self.cache_lock:`` -> ``cache_lock``)."""
    if not sg.is_lock_line(code):
        return None
    m = LOCK_NAME.match(code or "")
    name = (m.group(1) or m.group(2)) if m else None
    return name.rstrip("()").rsplit(".", 1)[-1] if name else None


# --- who a process is --------------------------------------------------------------------------------
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


@dataclass
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
        out[p] = _Look(b[0], cpu, moved, parked=before is not None and before == after)
    return out


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
    return _Look(last.state, cpu, moved, parked=parked)


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


def _took_at(frames: tuple[Frame, ...], name: str | None) -> str | None:
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


# --- file locks --------------------------------------------------------------------------------------------
def _filelock_targets(pid: int, tids: set[int], py_spy: str | None) -> dict[int, tuple[str, bool | None, bool]]:
    """tid -> (lock file, whether the acquire can time out, a soft lock) from the locals of filelock's frames
    (a ``SoftFileLock``: the file's existence is the lock, no kernel lock is taken)."""
    if py_spy is None:
        return {}
    command = dump_command(py_spy, pid, with_locals=True)
    if command is None:
        return {}
    try:
        p = subprocess.run(
            command[0], capture_output=True, text=True, timeout=LOCALS_TIMEOUT_S, check=False, env=PY_SPY_ENV
        )
    except (subprocess.TimeoutExpired, OSError):
        return {}
    import json

    try:
        data = json.loads(p.stdout) if p.returncode == 0 else []
    except ValueError:
        return {}
    out: dict[int, tuple[str, bool | None, bool]] = {}
    for t in data:
        tid = int(t.get("os_thread_id") or 0)
        if tid not in tids:
            continue
        soft = any(
            str(f.get("filename", "")).endswith(FILELOCK_DIR + "_soft.py")
            or any(str(v.get("repr", "")).startswith("<SoftFileLock") for v in (f.get("locals") or []))
            for f in t.get("frames", [])
        )
        path: str | None = None
        timeout: str | None = None
        for f in t.get("frames", []):  # innermost first: the path and the timeout may live in different frames
            if FILELOCK_DIR not in str(f.get("filename", "")):
                continue
            values = {str(v.get("name")): str(v.get("repr", "")) for v in (f.get("locals") or [])}
            path = path or next(
                (values[k].strip("'\"") for k in FILELOCK_PATH_LOCALS if values.get(k, "").startswith(("'/", '"/'))),
                None,
            )
            if timeout is None and values.get("timeout") not in (None, "None"):
                timeout = values["timeout"]
            if timeout is None and (m := FILELOCK_WAIT.match(values.get("wait", ""))):
                timeout = m.group(1)  # filelock 4.3: the acquire's resolved (blocking, _, timeout, ...) tuple
            if path is not None and timeout is not None:
                break
        if path is None:
            continue
        try:
            can_time_out = float(timeout) >= 0 if timeout is not None else None
        except ValueError:
            can_time_out = None
        out[tid] = (path, can_time_out, soft)
    return out


def _fd_holders(key: tuple[int, int, int], skip: set[int]) -> list[int]:
    """Processes with a lock on the file ``key`` in their fdinfo (OFD locks, or a flock whose pid in
    /proc/locks is stale: the fd was inherited by a child that outlived the locker)."""
    out = []
    for pid in proc.list_pids()[:MAX_FD_SCAN_PIDS]:
        if pid in skip:
            continue
        base = proc.PROC / str(pid) / "fdinfo"
        try:
            fds = os.listdir(base)
        except OSError:
            continue
        for fd in fds:
            text = proc.read_text(base / fd) or ""
            if "lock:" in text and any(
                e.key == key and not e.waiting
                for e in parse_locks("\n".join(ln for ln in text.splitlines() if ln.startswith("lock:")))
            ):
                out.append(pid)
                break
    return out


def _file_lock_wait(
    pid: int,
    tid: int,
    kind_hint: str,
    path: str,
    timeout: bool | None,
    entries: list[LockEntry],
    job: dict[int, list[ProcessSample]],
    py_spy: str | None,
    now: float,
) -> LockWait:
    key = file_key(path)
    if key is None:
        return LockWait(tid, kind_hint, path, timeout, note=f"{path} could not be read (gone?)")
    held = [e for e in entries if e.key == key and not e.waiting]
    waiters = tuple(sorted({e.pid for e in entries if e.key == key and e.waiting and e.pid > 0} | {pid}))
    kind = held[0].kind_word if held and kind_hint != "filelock" else kind_hint
    pids = [
        e.pid
        for e in held
        if e.pid > 0 and (proc.unreadable(e.pid) or proc.read_stat(proc.PROC / str(e.pid) / "stat") is not None)
    ]  # (a holder this watch may not read is kept: named, never read)
    how = "listed as holding it in /proc/locks"
    if held and not pids:  # an OFD lock, or a locker that exited with its fd inherited: its fdinfo says
        pids, how = _fd_holders(key, set(waiters)), "has it locked (its /proc/PID/fdinfo lists the lock)"
    holders = tuple(_holder(h, job, py_spy, now, how, name=None) for h in dict.fromkeys(pids) if h != pid)
    note = None if held else f"no process holds a lock on {path} now (it was released, or is being retried)"
    return LockWait(tid, kind, path, timeout, holders=holders, waiters=waiters, note=note)


def _soft_lock_wait(
    pid: int,
    tid: int,
    path: str,
    timeout: bool | None,
    job: dict[int, list[ProcessSample]],
    py_spy: str | None,
    now: float,
) -> LockWait:
    """A ``SoftFileLock``: the lock is the file's existence; its holder keeps it open while it holds it. The
    processes with the file open are its holders; with none, the file was left by a holder that is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return LockWait(tid, "soft", path, timeout, note=f"{path} does not exist now (released: the next try gets it)")
    key = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    opened = [p for p in _open_by(key, {pid})]
    holders = tuple(
        _holder(h, job, py_spy, now, "has the lock file open (a soft lock)", name=None, proven=True) for h in opened
    )
    age = max(0.0, now - st.st_mtime)
    note = (
        None
        if holders
        else (
            f"the soft lock file {path} exists ({age:.0f} s old) and none of its user's processes has it open "
            "(another user's processes were not searched for)"
            if proc.narrowed()
            else (
                f"the soft lock file {path} exists ({age:.0f} s old) and no process has it open: "
                "its holder is gone, and a soft lock is released only by deleting the file"
            )
        )
    )
    return LockWait(tid, "soft", path, timeout, holders=holders, waiters=(pid,), note=note)


def _open_by(key: tuple[int, int, int], skip: set[int]) -> list[int]:
    """Processes with the file ``key`` (device major, minor, inode) open."""
    out = []
    for other in proc.list_pids()[:MAX_FD_SCAN_PIDS]:
        if other in skip:
            continue
        base = proc.PROC / str(other) / "fd"
        try:
            fds = os.listdir(base)
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(base / fd)
            except OSError:
                continue
            if (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) == key:
                out.append(other)
                break
    return out


def _holder(
    pid: int,
    job: dict[int, list[ProcessSample]],
    py_spy: str | None,
    now: float,
    how: str,
    name: str | None,
    proven: bool = True,
    frames: tuple[Frame, ...] | None = None,
) -> LockHolder:
    in_job = pid in job
    if not in_job and proc.unreadable(pid):  # another user's, under the agent: named, never read
        why = f"{how}; a process of another user, which this watch does not read"
        return LockHolder(pid, "", _user(pid), UNREAD, None, None, None, False, proven=proven, how=why)
    look = _in_job_look(job[pid]) if in_job else _look([pid])[pid]
    if frames is None:
        frames = _job_frames(job[pid], pid) if in_job else _main_frames(pid, py_spy, nonblocking=True)
    if in_job:
        main = next((t for t in job[pid][-1].threads if t.tid == pid), None)
        wakes_in, syscall = (main.wakes_in, main.syscall) if main is not None else (None, None)
    else:
        call = read_blocked_call(pid, pid)
        wakes_in, syscall = (call.wakes_in, call.name) if call is not None else (None, None)
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
        took_at=_took_at(frames, name),
        parked=look.parked,
        wakes_in=None if wakes_in is None else round(wakes_in, 3),
        sleeping=syscall in sg.SLEEP_SYSCALLS if syscall else None,
    )


# --- semaphores ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Mapping:
    start: int
    end: int
    key: str  # "dev inode" of the mapped file
    path: str


def _sem_mappings(pid: int) -> list[_Mapping]:
    out = []
    for line in (proc.read_text(proc.PROC / str(pid) / "maps") or "").splitlines():
        if SEM_MAPPING not in line:
            continue
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        lo, hi = parts[0].split("-")
        out.append(_Mapping(int(lo, 16), int(hi, 16), f"{parts[3]} {parts[4]}", parts[5].replace(" (deleted)", "")))
    return out


def _sem_value(pid: int, addr: int) -> int | None:
    """A glibc semaphore's count: the 32-bit word the futex waits on (little-endian: the low half of
    its 64-bit data, whose high half counts the waiters)."""
    try:
        with open(proc.PROC / str(pid) / "mem", "rb") as f:
            f.seek(addr)
            raw = f.read(4)
    except (OSError, ValueError, OverflowError):
        return None
    return struct.unpack("<I", raw)[0] if len(raw) == 4 else None


def _futex_in(t: ThreadSample, maps: list[_Mapping]) -> _Mapping | None:
    if t.futex is None or not t.shared_futex:
        return None
    return next((m for m in maps if m.start <= t.futex < m.end), None)


def _sem_wait(
    pid: int,
    t: ThreadSample,
    mapping: _Mapping,
    job: dict[int, list[ProcessSample]],
    infos: dict[int, ProcessInfo],
    py_spy: str | None,
    now: float,
) -> LockWait:
    """Who shares the semaphore ``t`` waits for, who waits for it, and who (inferred) holds it."""
    sharers: list[int] = []
    waiters: list[int] = []
    for p, samples in job.items():
        maps = [m for m in _sem_mappings(p) if m.key == mapping.key]
        if not maps:
            continue
        sharers.append(p)
        if any(_futex_in(th, maps) for th in samples[-1].threads):
            waiters.append(p)
    name = lock_name(next((f.code for f in t.frames if sg.is_user(f)), None))
    candidates = [p for p in sharers if p not in waiters]
    parent = infos[pid].ppid if pid in infos else None
    # "Most likely" first: a process whose frame shows it holding the lock, then the waiter's parent (the
    # process that created the lock and handed it down), then the oldest.
    frames = {p: _job_frames(job[p], p) for p in candidates}
    took = {p: _took_at(frames[p], name) or "" for p in candidates}
    candidates.sort(
        key=lambda p: (not took[p].startswith("holds"), p != parent, infos[p].create_time if p in infos else 0.0)
    )
    holders = []
    for i, p in enumerate(candidates[:3]):
        proven = took[p].startswith("holds")
        how = (
            "its frame holds it"
            if proven
            else (
                "shares the semaphore and is not waiting for it"
                + ("" if len(candidates) == 1 else f" (one of {len(candidates)} such processes)")
            )
        )
        holders.append(_holder(p, job, py_spy, now, how, name, proven=proven and i == 0, frames=frames[p]))
    value = _sem_value(pid, t.futex) if t.futex is not None else None
    return LockWait(
        t.tid,
        "semaphore",
        mapping.path,
        t.timeout,
        holders=tuple(holders),
        sharers=tuple(sharers),
        waiters=tuple(waiters),
        value=value,
        name=name,
    )


def _job_frames(samples: list[ProcessSample], pid: int) -> tuple[Frame, ...]:
    """The newest main-thread stack of a job process (already read by the capture)."""
    for s in reversed(samples):
        main = next((t for t in s.threads if t.tid == pid), None)
        if main is not None and main.frames:
            return main.frames
    return ()


# --- pipes ---------------------------------------------------------------------------------------------
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
    deadline = time.monotonic() + budget_s
    out: list[int] = []
    seen: set[int] = set()
    order = [*first, *(p for p in proc.list_pids() if p not in set(first))]
    for i, pid in enumerate(order[:MAX_FD_SCAN_PIDS]):
        if i >= len(first) and time.monotonic() > deadline:
            return out, False
        seen.add(pid)
        try:
            fds = os.listdir(proc.PROC / str(pid) / "fd")
        except OSError:
            continue
        if any(_opens(pid, fd, target, write) for fd in fds):
            out.append(pid)
    return out, len(order) <= MAX_FD_SCAN_PIDS and not proc.narrowed()


def _searched() -> str:
    """Why a search of the host for the other end of a pipe or a socket may have missed it ("searched for": the
    graph and the rules then prove nothing from what it did not find)."""
    if proc.narrowed():
        return "only its user's processes were searched for its other end (another user's are not read)"
    return f"the host's processes were searched for {PIPE_SCAN_S:g} s only"


def _pipe_wait(
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
        _holder(w, job, py_spy, now, how + " (its /proc/PID/fd and fdinfo)", name=None) for w in found if w != pid
    )
    note = None if complete else _searched()
    if pid in found:
        end = "write" if reading else "read"
        note = f"the waiter itself holds the pipe's {end} end too" + (f"; {note}" if note else "")
    return LockWait(
        t.tid, "pipe" if reading else "pipe_full", target, False, holders=holders, waiters=(pid,), note=note
    )


def _reads_socket(t: ThreadSample) -> bool:
    """Blocked in a read of a socket with no timeout (Python's blocking socket; one with a timeout polls), or in a
    write to one whose buffers are full (its other end reads too slowly, or not at all)."""
    return (
        t.state == "S"
        and t.syscall in sg.READ_SYSCALLS | sg.WRITE_SYSCALLS
        and t.fd is not None
        and (t.fd_target or "").startswith(("socket", "tcp "))
    )


def _socket_wait(
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
    if peer is None:
        return None
    found, complete = pipe_holders(f"socket:[{peer}]", sorted(job), write=True)
    holders = tuple(
        _holder(
            w,
            job,
            py_spy,
            now,
            "holds the socket's other end (its /proc/PID/fd and the kernel's socket tables)",
            name=None,
        )
        for w in found
        if w != pid
    )
    note = None if complete else _searched()
    if pid in found:
        note = "the waiter itself holds the socket's other end too" + (f"; {note}" if note else "")
    described = t.fd_target if fd == t.fd else None
    what = described if (described or "").startswith("tcp ") else "a local socket"
    reading = t.syscall in sg.READ_SYSCALLS if reading is None else reading
    kind = "socket" if reading else "socket_full"
    return LockWait(t.tid, kind, f"{what} ({target})", False, holders=holders, waiters=(pid,), note=note)


FIFO_WCHAN = "wait_for_partner"  # the kernel's wait channel of an open() of a FIFO that waits for the other side


def _fifo_open_wait(pid: int, t: ThreadSample) -> LockWait | None:
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


# --- the pass ------------------------------------------------------------------------------------------
def _mp_helper(info: ProcessInfo | None) -> bool:
    """multiprocessing's resource tracker or forkserver: it reads its pipe for as long as the job runs."""
    return info is not None and any(h in " ".join(info.cmdline) for h in proc.MP_HELPERS)


def _reads_pipe(t: ThreadSample) -> bool:
    """Blocked reading a pipe, or writing to a full one (standard input too: read_waits keeps such a read only
    where another process of the job holds the pipe's write end; else whoever feeds it, `cat data |`, a launcher
    that never writes, is the input rule's to judge)."""
    return (
        t.state == "S"
        and t.syscall in sg.READ_SYSCALLS | sg.WRITE_SYSCALLS
        and t.fd is not None
        and t.fd_target == "pipe"
    )


def _reads_stdin(pid: int, fd: int | None, reading: bool) -> bool:
    """A read of the process's standard input, by fd 0 or by another fd open on the same pipe (``/dev/stdin``
    opened again, as torch.distributed.breakpoint() does for its prompt; a dup): the input rule's to judge."""
    if not reading or fd is None:
        return False
    if fd == 0:
        return True
    target = proc.fd_target(pid, fd)
    return target is not None and target == proc.fd_target(pid, 0)


POLL_CALLS = frozenset({"poll", "ppoll", "epoll_wait", "epoll_pwait"})
MAX_FOLLOWED_FILES = 8  # the files of one poll followed to their holders, at most


def _polls_forever(t: ThreadSample) -> bool:
    """Asleep in poll()/ppoll()/epoll_wait() with no timeout (subprocess's communicate(), a selector or an event
    loop with no timeout)."""
    return t.state == "S" and t.syscall in POLL_CALLS and t.timeout is False


def _poll_waits(
    pid: int, t: ThreadSample, job: dict[int, list[ProcessSample]], py_spy: str | None, now: float
) -> list[LockWait]:
    """A poll (or epoll) with no timeout on pipes and local sockets: one wait per fd it polls (reading: its writers,
    or the socket's other end; writing: its readers). The poll ends when any of them is ready: the graph follows
    the one that decides. One fd whose other end cannot be followed (a timer, an eventfd, a listening or a remote
    socket) may end it too: then none is said, and the poll is not a wait on a holder."""
    out: list[LockWait] = []
    polled = polled_fds(pid, t.tid) or []
    if len(polled) > MAX_FOLLOWED_FILES:
        return []  # (following each costs a search of the host's fds: a poll of many files is no wait on a holder)
    for fd, reading in polled:
        if _reads_stdin(pid, fd, reading):
            continue  # standard input: the input rule's (see _reads_pipe)
        wait = _pipe_wait(pid, t, job, py_spy, now, fd=fd, reading=reading) or _socket_wait(
            pid, t, job, py_spy, now, fd=fd, reading=reading
        )
        if wait is None:
            return []
        out.append(replace(wait, note="; ".join(n for n in (wait.note, POLLED) if n)))
    return out


def _candidates(samples: list[ProcessSample]) -> list[ThreadSample]:
    """Threads of a process's newest sample that may wait for a lock held elsewhere: blocked in a lock
    syscall, in a futex on shared memory, or in filelock's polling acquire."""
    out = []
    for t in samples[-1].threads:
        if any(FILELOCK_DIR in f.file for f in t.frames):
            out.append(t)  # polling: it may be between two tries (running) at the sample
        elif t.state in ("S", "D") and (t.syscall in ("flock", "fcntl") or (t.futex is not None and t.shared_futex)):
            out.append(t)
        elif t.state == "S" and t.wchan == FIFO_WCHAN:
            out.append(t)  # opening a FIFO whose other side nobody has open
        elif (_reads_pipe(t) or _reads_socket(t) or _polls_forever(t)) and not any(
            sg.matches_any(f, sg.WAIT_FOR_WORK) for f in t.frames
        ):
            out.append(t)  # a pool worker reading its task pipe waits for work: not a wait on a holder
    return out


def read_waits(
    series: dict[int, list[ProcessSample]], infos: dict[int, ProcessInfo], gone: set[int], py_spy: str | None
) -> dict[int, tuple[LockWait, ...]]:
    """pid -> what its blocked threads wait for (only processes with such a thread; cheap otherwise)."""
    wanted = {p: c for p, ss in series.items() if p not in gone and (c := _candidates(ss))}
    if not wanted:
        return {}
    now = time.time()
    entries = parse_locks(proc.read_text(LOCKS) or "")
    job = {p: ss for p, ss in series.items() if p not in gone}
    out: dict[int, list[LockWait]] = {}
    for pid, threads in wanted.items():
        polling = {t.tid for t in threads if any(FILELOCK_DIR in f.file for f in t.frames)}
        targets = _filelock_targets(pid, polling, py_spy) if polling else {}
        maps = _sem_mappings(pid) if any(t.shared_futex for t in threads) else []
        for t in threads:
            wait: LockWait | None = None
            if t.tid in targets:
                path, timeout, soft = targets[t.tid]
                wait = (
                    _soft_lock_wait(pid, t.tid, path, timeout, job, py_spy, now)
                    if soft
                    else _file_lock_wait(pid, t.tid, "filelock", path, timeout, entries, job, py_spy, now)
                )
            elif t.syscall in ("flock", "fcntl") and t.fd is not None:
                target = proc.fd_target(pid, t.fd)
                if target and target.startswith("/"):
                    wait = _file_lock_wait(
                        pid,
                        t.tid,
                        "flock" if t.syscall == "flock" else "posix",
                        target,
                        False,
                        entries,
                        job,
                        py_spy,
                        now,
                    )
            elif (m := _futex_in(t, maps)) is not None:
                wait = _sem_wait(pid, t, m, job, infos, py_spy, now)
            elif (
                _reads_pipe(t)
                and (t.tid == pid or t.syscall not in sg.READ_SYSCALLS)
                and not _mp_helper(infos.get(pid))
            ):
                # The main thread's read (a side thread's stops nothing), or any thread's write to a full pipe
                # (a queue's feeder thread that a join waits for). A read of its standard input is the input rule's
                # to judge, unless another process of the job holds that pipe's write end (a parent that never
                # closes its child's stdin): then it is a wait on that process like any other.
                wait = _pipe_wait(pid, t, job, py_spy, now)
                if wait is not None and _reads_stdin(pid, t.fd, t.syscall in sg.READ_SYSCALLS):
                    wait = wait if any(h.in_job and h.pid != pid for h in wait.holders) else None
            elif _reads_socket(t) and (t.tid == pid or t.syscall not in sg.READ_SYSCALLS):
                # the main thread's read, or any thread's write into a full socket (an upload a join waits for)
                wait = _socket_wait(pid, t, job, py_spy, now)
            elif t.wchan == FIFO_WCHAN:
                wait = _fifo_open_wait(pid, t)
            elif _polls_forever(t) and t.tid == pid and not _mp_helper(infos.get(pid)):
                out.setdefault(pid, []).extend(_poll_waits(pid, t, job, py_spy, now))
            if wait is not None:
                out.setdefault(pid, []).append(wait)
    return {p: tuple(ws) for p, ws in out.items()}
