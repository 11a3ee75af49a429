"""A job hangwatch did not start (`hangwatch attach PID`): its tree found from the pid, its output followed where it
goes to a regular file (nohup.out, a redirect), and nothing of it ended but a hang declared with --on-hang kill (a
signal to hangwatch detaches; the job's own exit leaves its orphans be)."""

from __future__ import annotations

import logging
import os
import signal
import stat
import threading
import time
from dataclasses import field
from pathlib import Path

import psutil

from hangwatch.capture import proc
from hangwatch.errors import UsageError
from hangwatch.records.values import frozen
from hangwatch.recover.terminate import JobTracker, Termination, end_tree
from hangwatch.supervise.job.job import TrackedTree
from hangwatch.supervise.job.launch import READ_SIZE, OnChunk, OutputLog

FOLLOW_EVERY_S = 2.0  # how often the files the job writes to are read for what it appended
CONTEXT_BYTES = (
    64 * 1024
)  # what the job wrote before the attach: into output.log (the incident's last lines), not progress
RUN_DIR_ENV = "HANGWATCH_RUN_DIR"  # set by `hangwatch run` in every process of its job
PTRACE_SCOPE = Path("/proc/sys/kernel/yama/ptrace_scope")
STREAMS = ((1, "stdout"), (2, "stderr"))


@frozen
class Target:
    """The process attached to, as found: its command line, and where its output goes."""

    pid: int
    argv: list[str]
    files: list[Path]  # the regular files its stdout and stderr go to (one if both go to the same file)
    unread: list[str] = field(default_factory=list)  # "stdout: a pipe", ...: output hangwatch cannot follow
    process: psutil.Process | None = field(default=None, compare=False)  # its identity (pid and start time)
    owners: set[int] = field(default_factory=set)  # its real user and its /proc directory's owner (root where it
    # is not dumpable): the users whose processes the agent's watch reads

    def where_output_goes(self) -> str:
        """One clause for the first line hangwatch says."""
        if self.files:
            return "its output followed in " + ", ".join(str(p) for p in self.files)
        reasons = "; ".join(self.unread) or "no output stream"
        return f"its output cannot be followed ({reasons}): stalls are seen from the kernel's view and its stacks"


def _is_python(p: psutil.Process) -> bool:
    try:
        if os.path.basename(p.exe()).startswith(("python", "pypy")):
            return True
    except psutil.Error:
        pass
    try:  # an embedded interpreter (a launcher binary, uwsgi): libpython is mapped
        return "libpython" in (proc.PROC / str(p.pid) / "maps").read_text(errors="replace")
    except OSError:
        return False


def _stream(pid: int, fd: int, name: str) -> tuple[Path | None, tuple[int, int] | None, str | None]:
    """The regular file fd ``fd`` of ``pid`` writes to, its identity; else why it cannot be followed."""
    link = proc.PROC / str(pid) / "fd" / str(fd)
    try:
        st = os.stat(link)
        target = os.readlink(link)
    except OSError:
        return None, None, f"{name}: closed"
    if stat.S_ISREG(st.st_mode):
        return Path(target.removesuffix(" (deleted)")), (st.st_dev, st.st_ino), None
    if target == os.devnull:
        return None, None, f"{name}: {os.devnull}"
    kind = "a pipe" if stat.S_ISFIFO(st.st_mode) else "a terminal" if stat.S_ISCHR(st.st_mode) else "a socket"
    return None, None, f"{name}: {kind}"


def find_target(pid: int, started: int | None = None) -> Target:
    """The process ``pid`` if hangwatch may attach to it; else a UsageError that says why and what to do.
    ``started``: the start time (clock ticks after boot) it must have (the agent's: a pid reused since is not it)."""
    try:
        p = psutil.Process(pid)
        argv, uid, name, status = p.cmdline(), p.uids().real, p.name(), p.status()
    except psutil.NoSuchProcess:
        raise UsageError(f"no process has pid {pid}", "Find the job's pid with `pgrep -af python`") from None
    except psutil.AccessDenied:
        raise UsageError(
            f"pid {pid} cannot be read by this user", "Run hangwatch as the job's owner, or as root"
        ) from None
    if pid == os.getpid() or status == psutil.STATUS_ZOMBIE:
        raise UsageError(f"pid {pid} is not a running job", "Find the job's pid with `pgrep -af python`")
    st = proc.read_stat(proc.PROC / str(pid) / "stat")
    if started is not None and (st is None or st.starttime != started):
        raise UsageError(f"pid {pid} is no longer the job it was", "Nothing to attach to: the job has ended")
    tgid = _tgid(pid)
    if tgid is not None and tgid != pid:
        raise UsageError(f"{pid} is a thread of process {tgid}, not a process", f"Attach to {tgid}")
    if os.geteuid() != 0 and uid != os.getuid():
        raise UsageError(
            f"pid {pid} belongs to another user (uid {uid}), whose processes hangwatch may not trace",
            "Run hangwatch as that user, or as root",
        )
    if not _is_python(p):
        raise UsageError(
            f"pid {pid} ({name}) is not a Python process",
            "Attach to the process that runs the training script (`pgrep -af python` lists them)",
        )
    try:
        run_dir = p.environ().get(RUN_DIR_ENV)
    except psutil.Error:
        run_dir = None
    if run_dir:
        raise UsageError(
            f"pid {pid} already runs under `hangwatch run` (its run directory: {run_dir})",
            f"Follow it with `hangwatch watch {run_dir}`",
        )
    _check_ptrace(pid)
    files, unread = _outputs(pid)
    owner = proc.owner_of(pid)
    if owner is None:
        raise UsageError(f"pid {pid} has ended", "Nothing to attach to: the job has ended")
    return Target(pid, argv or [name], files, unread, p, {uid, owner})


def _outputs(pid: int) -> tuple[list[Path], list[str]]:
    """The regular files its stdout and stderr go to that this user can read (one if both go to the same file), and
    why each other stream cannot be followed."""
    files: list[Path] = []
    seen: set[tuple[int, int]] = set()
    unread: list[str] = []
    for fd, stream in STREAMS:
        path, ident, why = _stream(pid, fd, stream)
        if why is not None:
            unread.append(why)
        elif ident is not None and path is not None and ident not in seen:
            seen.add(ident)
            try:
                os.close(os.open(_open_path(pid, path), os.O_RDONLY | os.O_CLOEXEC))
            except OSError as e:
                unread.append(f"{stream}: {path} cannot be read ({e.strerror})")
                continue
            files.append(path)
    return files, unread


def _tgid(pid: int) -> int | None:
    try:
        for line in (proc.PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("Tgid:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _check_ptrace(pid: int) -> None:
    """A user who is not root traces only its own descendants under Yama's ptrace_scope 1 or more."""
    if os.geteuid() == 0:
        return
    try:
        scope = int(PTRACE_SCOPE.read_text().strip())
    except (OSError, ValueError):
        return
    if scope >= 1:
        raise UsageError(
            f"this kernel lets a user trace only its own child processes (kernel.yama.ptrace_scope={scope}), "
            f"so pid {pid}'s stacks cannot be read",
            "Run hangwatch as root, or allow it with `sudo sysctl kernel.yama.ptrace_scope=0`",
        )


class OutputFollower(threading.Thread):
    """Follows the regular files the job writes its output to: what it appends goes to output.log and to the
    progress reader, as a pump's chunks do for a job hangwatch started. Reads only (pread at its own offset)."""

    def __init__(self, files: list[Path], pid: int, log: OutputLog, on_chunk: OnChunk) -> None:
        super().__init__(name="hangwatch-follow", daemon=True)
        self.log, self.on_chunk = log, on_chunk
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._files: list[list[int]] = []  # [fd, offset]
        for path in files:
            try:  # through /proc: the file the job writes, even if it was renamed or deleted since
                fd = os.open(_open_path(pid, path), os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                size = os.fstat(fd).st_size
                start = max(0, size - CONTEXT_BYTES)
                before = os.pread(fd, size - start, start)
            except OSError:
                os.close(fd)
                continue
            if before:
                self.log.write(before)  # what came before the attach: context for the incident, not progress
            self._files.append([fd, size])

    def run(self) -> None:
        """Read what was appended, every FOLLOW_EVERY_S, until closed."""
        while not self._closing.wait(FOLLOW_EVERY_S):
            try:
                self.read_new()
            except Exception:  # the thread goes on: its output is progress, and a look needs it
                logging.getLogger(__name__).exception("reading the job's output failed")

    def read_new(self, timeout: float = 2.0) -> None:
        """What the job appended since the last read (a file that shrank was truncated: read from its start); nothing
        if another read holds the files past ``timeout``."""
        if not self._lock.acquire(timeout=timeout):
            return
        try:
            self._read_locked()
        finally:
            self._lock.release()

    def _read_locked(self) -> None:
        for entry in self._files:
            fd, offset = entry
            try:
                size = os.fstat(fd).st_size
                if size < offset:
                    offset = 0
                while offset < size:
                    data = os.pread(fd, min(READ_SIZE, size - offset), offset)
                    if not data:
                        break
                    offset += len(data)
                    self.log.write(data)
                    self.on_chunk(data, time.time())
            except OSError:
                pass
            entry[1] = offset

    def close(self) -> None:
        """The last bytes read, the files closed (a read still stuck after 2 s, on a hung network mount: left to
        the daemon thread, never waited for)."""
        self._closing.set()
        if self.is_alive():
            self.join(timeout=2.0)
        if not self._lock.acquire(timeout=2.0):
            return
        try:
            if not self.is_alive():
                self._read_locked()
            for fd, _ in self._files:
                os.close(fd)
            self._files = []
        finally:
            self._lock.release()


def _open_path(pid: int, path: Path) -> Path:
    for fd, _ in STREAMS:
        link = proc.PROC / str(pid) / "fd" / str(fd)
        try:
            if os.readlink(link).removesuffix(" (deleted)") == str(path):
                return link
        except OSError:
            continue
    return path


class AttachedJob(TrackedTree):
    """A running job hangwatch attached to: the Job the run loop watches, with no pumps, no guardian."""

    def __init__(self, target: Target, log: OutputLog, on_chunk: OnChunk) -> None:
        self.target = target
        self._proc = target.process or psutil.Process(target.pid)  # its start time, against a reused pid
        self.tracker = JobTracker(target.pid)  # the tree under it; orphans only of a group or session it leads
        self.follower = OutputFollower(target.files, target.pid, log, on_chunk) if target.files else None
        if self.follower is not None:
            self.follower.start()

    @property
    def pid(self) -> int:
        """The process attached to."""
        return self.target.pid

    @property
    def owned(self) -> bool:
        """hangwatch did not start it."""
        return False

    def _gone(self) -> bool:
        try:
            return not self._proc.is_running() or self._proc.status() == psutil.STATUS_ZOMBIE
        except psutil.Error:
            return True

    def poll(self) -> int | None:
        """0 once it has ended (its exit status is its parent's to read), None while it runs."""
        return 0 if self._gone() else None

    def _wait_root(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self._gone():
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        return True

    def end(self, grace_s: float, first_signal: int = signal.SIGTERM) -> Termination:
        """End the whole tree (only for a hang declared with --on-hang kill); never a pid its root no longer has."""
        if self._gone():
            return Termination([], [], [], 0.0)
        term = end_tree(self.tracker, grace_s, self._wait_root, first_signal=first_signal)
        self.drain(0.0)
        return term

    def forward(self, signum: int) -> None:
        """Nothing: a signal to hangwatch detaches it; the job is not told."""

    def drain(self, quiet_s: float) -> None:
        """The last bytes the job appended."""
        if self.follower is not None:
            self.follower.read_new()

    def output_held(self) -> int | None:
        """Never: an attached job writes where it always did, hangwatch passes nothing on."""
        return None

    def close(self) -> None:
        """Stop following its output."""
        if self.follower is not None:
            self.follower.close()
