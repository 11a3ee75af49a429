"""The wait-for view: what a blocked thread waits for, and who holds it, across processes.

- File locks (flock, POSIX, OFD): a thread blocked in ``flock``/``fcntl(F_SETLKW)``, or polling in the
  ``filelock`` package's acquire (a sleep around a non-blocking flock: its frame's locals name the file).
  The kernel lists every lock in ``/proc/locks`` with its holder's pid; an OFD lock (pid -1) or a holder
  whose pid is stale is found through ``/proc/PID/fdinfo``'s ``lock:`` lines.
- ``multiprocessing`` locks and semaphores: a futex wait on an address inside a shared mapping of
  ``/dev/shm/sem.*``. Who else maps that semaphore (its sharers), which of them wait for it, and its
  count (read from the waiter's memory) are measured; the holder is named only when a frame shows it
  (``with lock:`` around its line), else inferred (a sharer that does not wait for it), and said so.

- Pipes, sockets, FIFOs and polls: capture/pipes.py. Who a holder is (its user, age, what its threads do):
  capture/holders.py.

Everything here reads; a holder outside the job's tree is read in non-blocking mode and never touched.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

from hangwatch import signatures as sg
from hangwatch.capture import proc, roles
from hangwatch.capture.holders import (
    LOCALS_TIMEOUT_S,
    MAX_FD_SCAN_PIDS,
    holder,
    job_frames,
    took_at,
)
from hangwatch.capture.maps import Mapping, mappings
from hangwatch.capture.pipes import (
    FIFO_WCHAN,
    PIPE_SCAN_S,
    POLL_CALLS,
    anon_wait,
    eventfd_wait,
    fifo_open_wait,
    host_holders,
    pipe_wait,
    poll_waits,
    polls_forever,
    pty_wait,
    reads_eventfd,
    reads_pipe,
    reads_socket,
    reads_timerfd,
    socket_wait,
    tty_io,
)
from hangwatch.capture.stacks import PY_SPY_ENV, dump_command
from hangwatch.capture.syscalls import filesystem_of
from hangwatch.records.evidence import (
    LockWait,
    ProcessInfo,
    ProcessSample,
    ThreadSample,
)
from hangwatch.records.values import frozen

LOCKS = proc.PROC / "locks"
SEM_MAPPING = "/dev/shm/sem."  # noqa: S108 - a name we look for in /proc/PID/maps, not a file we write. glibc's named semaphores (multiprocessing's SemLock on Linux)
FILELOCK_DIR = "/filelock/"  # the filelock package (Hugging Face datasets, hub, transformers use it)
FILELOCK_PATH_LOCALS = ("lock_filename", "canonical_path", "lock_file")
FILELOCK_WAIT = re.compile(r"^\((?:True|False), ([^,]+), (-?[\d.]+)")  # (blocking, cancel_check, timeout, ...)


@frozen
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
        if tid in tids and (lock := _filelock_of(t)) is not None:
            out[tid] = lock
    return out


def _filelock_of(t: dict[str, Any]) -> tuple[str, bool | None, bool] | None:
    """One thread of a py-spy dump in filelock's acquire: (lock file, whether it can time out, a soft lock); None
    where its frames name no lock file."""
    soft = any(
        str(f.get("filename", "")).endswith(FILELOCK_DIR + "_soft.py")
        or any(str(v.get("repr", "")).startswith("<SoftFileLock") for v in (f.get("locals") or []))
        for f in t.get("frames", [])
    )
    path: str | None = None
    timeout: str | None = None
    cancel = False  # a cancel_check callback (filelock 4.3) may end an acquire that has no timeout
    for f in t.get("frames", []):  # innermost first: the path and the timeout may live in different frames
        if FILELOCK_DIR not in str(f.get("filename", "")):
            continue
        values = {str(v.get("name")): str(v.get("repr", "")) for v in (f.get("locals") or [])}
        path = path or next(
            (values[k].strip("'\"") for k in FILELOCK_PATH_LOCALS if values.get(k, "").startswith(("'/", '"/'))),
            None,
        )
        cancel = cancel or values.get("cancel_check") not in (None, "None")
        if timeout is None and values.get("timeout") not in (None, "None"):
            timeout = values["timeout"]
        if timeout is None and (m := FILELOCK_WAIT.match(values.get("wait", ""))):
            timeout, cancel = m.group(2), cancel or m.group(1) != "None"  # filelock 4.3's resolved wait tuple
    if path is None:
        return None
    try:
        can_time_out = True if cancel else float(timeout) >= 0 if timeout is not None else None
    except ValueError:
        can_time_out = None
    return path, can_time_out, soft


def _fd_holders(key: tuple[int, int, int], skip: set[int], kinds: tuple[str, ...] | None = None) -> list[int]:
    """Processes with a lock on the file ``key`` in their fdinfo (OFD locks, or a flock whose pid in
    /proc/locks is stale: the fd was inherited by a child that outlived the locker); ``kinds``: of those only."""
    out = []
    for pid in proc.list_pids()[:MAX_FD_SCAN_PIDS]:
        if pid in skip:
            continue
        base = proc.PROC / str(pid) / "fdinfo"
        try:
            fds = os.listdir(base)
        except OSError:
            continue
        if any(
            e.key == key and not e.waiting and (kinds is None or e.kind in kinds)
            for fd in fds
            for e in _fd_locks(base / fd)
        ):
            out.append(pid)
    return out


def _locks_key(fdinfo: Path, key: tuple[int, int, int]) -> bool:
    """Whether the open file behind ``fdinfo`` holds a lock on the file ``key``."""
    return any(e.key == key and not e.waiting for e in _fd_locks(fdinfo))


def _fd_locks(fdinfo: Path) -> list[LockEntry]:
    """The locks one fd's /proc/PID/fdinfo/FD lists (those held through that open file, not one it waits for)."""
    text = proc.read_text(fdinfo) or ""
    return parse_locks("\n".join(ln for ln in text.splitlines() if ln.startswith("lock:"))) if "lock:" in text else []


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
    fd: int | None = None,
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
    hows: dict[int, str] = {}
    if held and kind == "flock":
        # a flock belongs to an open file: /proc/locks names the process that took it, which may have closed its copy
        # while a child it forked keeps one (the lock stays until the last copy goes); its holders are the processes
        # whose fdinfo lists it. Not where the waiter keeps a copy itself: another thread of it may unlock that
        through = _fd_holders(key, set(), kinds=("FLOCK",))
        if through and pid not in through and set(through) != set(pids):
            copy = "has it locked through its copy of the open file (its /proc/PID/fdinfo lists the lock)"
            hows = {h: how if h in pids else copy for h in through}
            pids = through
    if held and not pids:  # an OFD lock, or a locker that exited with its fd inherited: its fdinfo says
        pids, how = _fd_holders(key, set(waiters)), "has it locked (its /proc/PID/fdinfo lists the lock)"
    holders = tuple(holder(h, job, py_spy, now, hows.get(h, how), name=None) for h in dict.fromkeys(pids) if h != pid)
    note = None if held else f"no process holds a lock on {path} now (it was released, or is being retried)"
    # a flock or an OFD lock belongs to an open file: a second open of it waits for the first, in one process too
    # (an OFD lock's holder is not in /proc/locks: the waiter's own only where it is the one lock held on the file)
    own = (
        _own_lock_fd(pid, key, fd, held[0].kind)
        if held and not holders and (kind in ("flock", "filelock") or (kind == "ofd" and len(held) == 1))
        else None
    )
    if own is not None:  # another process that has it locked too (a shared open file, a fork's copy) may unlock it
        others, complete = host_holders(
            [pid], lambda p, fd: p != pid and _locks_key(proc.PROC / str(p) / "fdinfo" / fd, key), PIPE_SCAN_S
        )
        own = None if others or not complete else own  # (a search cut short, or a process unread: it may be one)
    if own is not None:
        note = (
            f"the waiter itself holds it, through another open of the file (its fd {own}, whose "
            f"/proc/{pid}/fdinfo lists the lock)"
        )
    return LockWait(tid, kind, path, timeout, holders=holders, waiters=waiters, note=note)


def _own_lock_fd(pid: int, key: tuple[int, int, int], waited: int | None, kind: str) -> int | None:
    """The fd of ``pid``, other than the one it waits on (``waited``), through which it holds a lock of ``kind``
    (FLOCK, OFDLCK) on the file ``key`` (its fdinfo lists only locks it holds, not the one it waits for), or None."""
    base = proc.PROC / str(pid) / "fdinfo"
    try:
        fds = sorted(os.listdir(base), key=lambda x: int(x) if x.isdigit() else -1)
    except OSError:
        return None
    for fd in fds:
        if (
            fd.isdigit()
            and int(fd) != waited
            and any(e.key == key and not e.waiting and e.kind == kind for e in _fd_locks(base / fd))
        ):
            return int(fd)
    return None


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
        holder(h, job, py_spy, now, "has the lock file open (a soft lock)", name=None, proven=True) for h in opened
    )
    age = max(0.0, now - st.st_mtime)
    fs = shared_filesystem(pid, path)
    note = (
        None
        if holders
        else (
            f"the soft lock file {path} exists ({age:.0f} s old) and none of its user's processes has it open "
            "(another user's processes were not searched for)"
            if proc.narrowed()
            else (
                f"the soft lock file {path} exists ({age:.0f} s old) on a filesystem other hosts share ({fs}) and "
                "no process on this host has it open: a process on another host may hold it"
                if fs is not None
                else (
                    f"the soft lock file {path} exists ({age:.0f} s old) and no process has it open: "
                    "its holder is gone, and a soft lock is released only by deleting the file"
                )
            )
        )
    )
    return LockWait(tid, "soft", path, timeout, holders=holders, waiters=(pid,), note=note)


LOCAL_FUSE = ("fuse.fuse-overlayfs", "fuse.lxcfs")  # FUSE mounts that are this host's own (a rootless container's root)


def shared_filesystem(pid: int, path: str) -> str | None:
    """The type of the filesystem ``path`` lives on when other hosts may share it (NFS, Lustre, a FUSE mount of a
    bucket...): there, no process of this host holding a file says nothing of the others. None when it is local."""
    fs = filesystem_of(pid, path)
    if fs is None or fs in LOCAL_FUSE or not fs.startswith(sg.NETWORK_FILESYSTEMS):
        return None
    return fs


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


# --- semaphores ------------------------------------------------------------------------------------------
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


def _futex_in(t: ThreadSample, maps: list[Mapping]) -> Mapping | None:
    if t.futex is None or not t.shared_futex:
        return None
    return next((m for m in maps if m.start <= t.futex < m.end), None)


def _sem_wait(
    pid: int,
    t: ThreadSample,
    mapping: Mapping,
    job: dict[int, list[ProcessSample]],
    infos: dict[int, ProcessInfo],
    py_spy: str | None,
    now: float,
) -> LockWait:
    """Who shares the semaphore ``t`` waits for, who waits for it, and who (inferred) holds it."""
    sharers, waiters, ended = _sharing(mapping, job)
    name = sg.lock_name(next((f.code for f in t.frames if sg.is_user(f)), None))
    candidates = [p for p in sharers if p not in waiters]
    parent = infos[pid].ppid if pid in infos else None
    # "Most likely" first: a process whose frame shows it holding the lock, then the waiter's parent (the
    # process that created the lock and handed it down), then the oldest.
    frames = {p: job_frames(job[p], p) for p in candidates}
    took = {p: took_at(frames[p], name) or "" for p in candidates}
    candidates.sort(
        key=lambda p: (not took[p].startswith("holds"), p != parent, infos[p].create_time if p in infos else 0.0)
    )
    holders = []
    for i, p in enumerate(candidates[:3]):
        proven = took[p].startswith("holds")
        how = (
            "its frame holds it"
            if proven
            else "it ended after the samples: whether it shared the semaphore was not read (it may have released it)"
            if p in ended
            else (
                "shares the semaphore and is not waiting for it"
                + ("" if len(candidates) == 1 else f" (one of {len(candidates)} such processes)")
            )
        )
        holders.append(holder(p, job, py_spy, now, how, name, proven=proven and i == 0, frames=frames[p]))
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


def _sharing(mapping: Mapping, job: dict[int, list[ProcessSample]]) -> tuple[list[int], list[int], set[int]]:
    """The job's processes that map the semaphore ``mapping`` is in, and those of them with a thread waiting on it
    in their newest sample. Maps are read now, after the samples: a process alive at its newest sample and ended
    since is a sharer that does not wait (it moved during the look, and may have released the semaphore as it went).
    It was read as one that never shared it: a consumer that marked its tasks done and exited between the samples
    and this read left its parent's stale sample waiting with no sharer but itself, proven hung, a healthy job
    killed. One that ended before the samples (a zombie in them) shares nothing. The third: those that ended since."""
    sharers: list[int] = []
    waiters: list[int] = []
    ended: set[int] = set()
    for p, samples in job.items():
        maps = [m for m in mappings(p, SEM_MAPPING) if m.key == mapping.key]
        if not maps:
            if samples[-1].exit_status is None and _ended(p):
                sharers.append(p)
                ended.add(p)
            continue
        sharers.append(p)
        if any(_futex_in(th, maps) for th in samples[-1].threads):
            waiters.append(p)
    return sharers, waiters, ended


def _ended(pid: int) -> bool:
    st = proc.read_stat(proc.PROC / str(pid) / "stat")
    return st is None or st.state.startswith(("Z", "X"))


# --- the pass ------------------------------------------------------------------------------------------
def _mp_helper(info: ProcessInfo | None, infos: dict[int, ProcessInfo]) -> bool:
    """multiprocessing's resource tracker or forkserver: it reads its pipe for as long as the job runs."""
    parent = infos.get(info.ppid) if info is not None else None
    return info is not None and roles.is_mp_helper(info.cmdline, parent.cmdline if parent is not None else ())


def _candidates(samples: list[ProcessSample]) -> list[ThreadSample]:
    """Threads of a process's newest sample that may wait for a lock held elsewhere: blocked in a lock
    syscall, in a futex on shared memory, or in filelock's polling acquire. A thread the newest sample caught running
    (under load, woken in its wait and waiting for a CPU: a writer its reader made room for) is read at its newest
    sample that caught it waiting, as the state module reads it (``ThreadView.waiting``)."""
    waited = {t.tid: t for s in samples for t in s.threads if t.state != "R"}
    out = []
    for t in (waited.get(x.tid, x) if x.state == "R" else x for x in samples[-1].threads):
        if any(FILELOCK_DIR in f.file for f in t.frames):
            out.append(t)  # polling: it may be between two tries (running) at the sample
        elif t.state in ("S", "D") and (t.syscall in ("flock", "fcntl") or (t.futex is not None and t.shared_futex)):
            out.append(t)
        elif t.state == "S" and t.wchan == FIFO_WCHAN:
            out.append(t)  # opening a FIFO whose other side nobody has open
        elif (
            reads_pipe(t) or reads_socket(t) or reads_eventfd(t) or reads_timerfd(t) or tty_io(t) or polls_forever(t)
        ) and not _pool_worker_idle(t):
            out.append(t)
    return out


def _pool_worker_idle(t: ThreadSample) -> bool:
    """A multiprocessing.Pool or concurrent.futures worker reading its task pipe waits for work: not a wait on a holder
    (one in a task of the user's, with the worker loop below it, waits on what its task reads)."""
    return any(sg.matches_any(f, sg.WAIT_FOR_WORK) for f in t.frames) and sg.waits_for_work(t.frames)


@frozen
class _Reading:
    """What one reading of the job's waits shares: the kernel's lock table, the job's samples, its processes."""

    entries: list[LockEntry]
    job: dict[int, list[ProcessSample]]
    infos: dict[int, ProcessInfo]
    py_spy: str | None
    now: float


def read_waits(
    series: dict[int, list[ProcessSample]], infos: dict[int, ProcessInfo], gone: set[int], py_spy: str | None
) -> dict[int, tuple[LockWait, ...]]:
    """pid -> what its blocked threads wait for (only processes with such a thread; cheap otherwise)."""
    wanted = {p: c for p, ss in series.items() if p not in gone and (c := _candidates(ss))}
    if not wanted:
        return {}
    job = {p: ss for p, ss in series.items() if p not in gone}
    r = _Reading(parse_locks(proc.read_text(LOCKS) or ""), job, infos, py_spy, time.time())
    out: dict[int, list[LockWait]] = {}
    for pid, threads in wanted.items():
        polling = {t.tid for t in threads if any(FILELOCK_DIR in f.file for f in t.frames)}
        targets = _filelock_targets(pid, polling, py_spy) if polling else {}
        maps = mappings(pid, SEM_MAPPING) if any(t.shared_futex for t in threads) else []
        for t in threads:
            waits = _thread_waits(pid, t, targets, maps, r)
            if waits:
                out.setdefault(pid, []).extend(waits)
    return {p: tuple(ws) for p, ws in out.items()}


def _thread_waits(
    pid: int,
    t: ThreadSample,
    targets: dict[int, tuple[str, bool | None, bool]],
    maps: list[Mapping],
    r: _Reading,
) -> list[LockWait]:
    """What one blocked thread waits for: a file lock (a filelock's poll, flock, fcntl), a semaphore, a pipe, a
    socket, a FIFO's open, a poll with no end; [] where it is none of those (or not this reader's to judge)."""
    info = r.infos.get(pid)
    if t.tid in targets:
        path, timeout, soft = targets[t.tid]
        if soft:
            return _one(_soft_lock_wait(pid, t.tid, path, timeout, r.job, r.py_spy, r.now))
        return _one(_file_lock_wait(pid, t.tid, "filelock", path, timeout, r.entries, r.job, r.py_spy, r.now))
    if t.syscall in ("flock", "fcntl") and t.fd is not None:
        target = proc.fd_target(pid, t.fd)
        if not (target and target.startswith("/")):
            return []
        kind = "flock" if t.syscall == "flock" else "posix"
        return _one(_file_lock_wait(pid, t.tid, kind, target, False, r.entries, r.job, r.py_spy, r.now, t.fd))
    if (m := _futex_in(t, maps)) is not None:
        return _one(_sem_wait(pid, t, m, r.job, r.infos, r.py_spy, r.now))
    # The main thread's read; a side thread's where the main thread is parked on a lock, event or queue of its own
    # (the side thread may be the one to release it: graph.py follows its read then); any thread's write to a full
    # pipe or socket (a queue's feeder thread, an upload, that a join waits for).
    followed = t.tid == pid or t.syscall not in sg.READ_SYSCALLS or _main_parked(pid, r)
    if reads_pipe(t) and followed and not _mp_helper(info, r.infos):
        # Its standard input's pipe too, at a prompt or not: whoever holds the write end, in the job or outside it
        # (`(sleep 30; echo y) | python train.py`), may still write, so the graph follows it (only a terminal is a
        # person's).
        return _one(pipe_wait(pid, t, r.job, r.py_spy, r.now))
    if reads_socket(t) and followed:
        return _one(socket_wait(pid, t, r.job, r.py_spy, r.now))
    if reads_eventfd(t) and followed:
        return _one(eventfd_wait(pid, t, r.job, r.py_spy, r.now))
    if reads_timerfd(t) and followed:
        return _one(anon_wait(pid, t, r.job, r.py_spy, r.now))
    if tty_io(t) and followed:
        return _one(pty_wait(pid, t, r.job, r.py_spy, r.now))
    if t.wchan == FIFO_WCHAN:
        return _one(fifo_open_wait(pid, t))
    if polls_forever(t) and t.tid == pid and not _mp_helper(info, r.infos):
        return list(poll_waits(pid, t, r.job, r.py_spy, r.now)) or _one(anon_wait(pid, t, r.job, r.py_spy, r.now))
    return []


def _main_parked(pid: int, r: _Reading) -> bool:
    """The process's main thread, at its newest sample, waits with no timeout in a futex private to it (a lock, event or
    queue), or in a poll (an event loop, which another thread may wake), or in a read of a pipe or a socket (a client
    whose server is a thread of its own)."""
    main = next((t for t in r.job[pid][-1].threads if t.tid == pid), None) if r.job.get(pid) else None
    if main is None or main.state != "S":
        return False
    if reads_pipe(main) or reads_socket(main) or reads_eventfd(main):
        return True
    return main.timeout is False and ((main.futex is not None and not main.shared_futex) or main.syscall in POLL_CALLS)


def _one(wait: LockWait | None) -> list[LockWait]:
    return [wait] if wait is not None else []
