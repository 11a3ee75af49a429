"""End a job's whole tree: SIGTERM to the job, a grace period, then SIGKILL to everything left.

The tree is every process ever seen as part of the job (descendants, and orphans by process
group/session), identified by (pid, start time) so that a reused PID is never signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from hangwatch.capture import proc
from hangwatch.records.values import frozen, mutable
from hangwatch.redact import redact_argv

if TYPE_CHECKING:
    import psutil

# psutil is imported only to signal and wait: tracking reads /proc itself, so a job that ends by
# itself never pays for the import (`hangwatch run -- true`).


@frozen
class Seen:
    """A process of the job as first seen: who it is (its identity is pid + start time)."""

    pid: int
    ppid: int
    comm: str
    cmdline: str  # redacted, cut
    started: float  # clock ticks after boot


@frozen
class Gone:
    """A process of the job that was seen, then seen gone: the short history `child.lost_work` reads."""

    who: Seen
    at: float  # unix time of the scan that found it gone
    replaced_by: int | None  # a process with the same parent and command that appeared in the same scan


LATE_PASSES = 3  # scans after the SIGKILLs for processes forked meanwhile, each killed in turn
HISTORY = 64  # processes that went, kept (a job whose DataLoader workers restart every epoch goes through many)


@mutable
class JobTracker:
    """Remembers the job's processes across its life (workers come and go; orphans change parent), and
    the last HISTORY that went away."""

    root: int
    births: Path | None = None  # heartbeat/born/: what the job's startup hook says started (None: not read)
    session: int | None = None  # the root's session, as first seen (a process that left it is not the job's)
    seen: dict[int, float] = field(default_factory=dict)  # pid -> start time (clock ticks after boot)
    who: dict[int, Seen] = field(default_factory=dict)
    gone: deque[Gone] = field(default_factory=lambda: deque(maxlen=HISTORY))
    _alive: set[int] = field(default_factory=set)

    def scan(self) -> None:
        """Remember every process of the job seen now, and note the ones gone since the last scan. Once
        the root is gone and its pid belongs to another process (reaped, then reused), the tree under that
        pid is not the job's: nothing new is taken from it (the processes already remembered stay)."""
        if self.root in self.seen and _start_time(self.root) not in (None, self.seen[self.root]):
            return
        now_alive: set[int] = set()
        new: list[Seen] = []
        for m in proc.job_members(self.root, self.session):
            st = m.stat or proc.read_stat(proc.PROC / str(m.pid) / "stat")
            if st is not None and m.pid == self.root and self.session is None:
                self.session = st.sid  # a zombie root still says its session
            if st is None or st.state == "Z":
                continue
            if m.pid not in self.seen:
                self.seen[m.pid] = float(st.starttime)
                who = Seen(m.pid, st.ppid, st.comm, " ".join(proc.read_cmdline(m.pid))[:160], float(st.starttime))
                self.who[m.pid] = who
                new.append(who)
            if self.seen[m.pid] == st.starttime:
                now_alive.add(m.pid)
        born, born_gone = self._births()
        for who in born:  # alive, and not under the root now (an orphan once the root is gone): the job's all the same
            self.seen[who.pid], self.who[who.pid] = who.started, who
            new.append(who)
            now_alive.add(who.pid)
        now_alive |= set(self.alive_pids_of(self._alive - now_alive))  # out of the walk's reach, not gone
        at = time.time()
        gone = [self.who.pop(pid) for pid in sorted(self._alive - now_alive) if pid in self.who]
        for was in gone + born_gone:  # born_gone: started and ended between two scans; no scan saw it, its hook did
            repl = next((n.pid for n in new if n.ppid == was.ppid and n.cmdline == was.cmdline), None)
            self.gone.append(Gone(was, at, repl))
        self._alive = now_alive

    def _births(self) -> tuple[list[Seen], list[Seen]]:
        """What the job's startup hook says started (``births``) and no scan saw: those alive now, and those gone
        (oldest first). Each record is read once and removed: its process is known from then on."""
        if self.births is None:
            return [], []
        try:
            names = os.listdir(self.births)
        except OSError:
            return [], []
        alive: list[Seen] = []
        gone: list[Seen] = []
        for name in names:
            pid_text, _, ticks = name.partition("-")
            if not (pid_text.isdigit() and ticks.isdigit()):
                continue  # a record still being written (a temporary name)
            pid, started, path = int(pid_text), float(ticks), self.births / name
            if self.seen.get(pid) != started:
                who = _born(path, pid, started)
                st = proc.read_stat(proc.PROC / str(pid) / "stat")
                if who is None:
                    pass
                elif st is None or float(st.starttime) != started or st.state == "Z":
                    if who.ppid in self.seen:  # a child of a process of the job: its history (not a helper's helper)
                        gone.append(who)
                elif self.session is not None and self.session in (st.sid, st.pgid):
                    alive.append(who)  # out of the walk's reach, in the job's session: the job's
                # else: alive in a session of its own (a daemon that left the job): never the job's to end
            with contextlib.suppress(OSError):
                path.unlink()
        return alive, sorted(gone, key=lambda w: w.started)

    def alive_pids(self) -> list[int]:
        """Every remembered process still alive (same pid and start time, not a zombie)."""
        return self.alive_pids_of(self.seen)

    def alive_pids_of(self, pids: Iterable[int]) -> list[int]:
        """Those of ``pids`` (remembered ones) still alive: the same pid and start time, not a zombie."""
        out = []
        for pid in list(pids):
            st = proc.read_stat(proc.PROC / str(pid) / "stat")
            if st is not None and st.starttime == self.seen.get(pid) and st.state != "Z":
                out.append(pid)
        return out

    def alive(self) -> list[psutil.Process]:
        """Every remembered process still alive, as psutil processes (to signal and wait for)."""
        pids = self.alive_pids()
        if not pids:
            return []
        import psutil

        out = []
        for pid in pids:
            try:
                p = psutil.Process(pid)
            except psutil.Error:
                continue
            if _start_time(pid) == self.seen[pid]:  # still the one remembered, not a pid reused meanwhile
                out.append(p)
        return out


def _born(path: Path, pid: int, started: float) -> Seen | None:
    """A birth record (``ppid\ncomm\ncmdline``, the command line's arguments split by NUL), as first seen."""
    try:
        ppid, comm, cmdline = path.read_bytes().split(b"\n", 2)
    except (OSError, ValueError):
        return None
    argv = redact_argv(a.decode(errors="replace") for a in cmdline.split(b"\0") if a)
    return Seen(pid, int(ppid) if ppid.isdigit() else 0, comm.decode(errors="replace"), " ".join(argv)[:160], started)


def _start_time(pid: int) -> float | None:
    """A process's start time in clock ticks after boot (with its pid, an identity no reuse repeats)."""
    st = proc.read_stat(proc.PROC / str(pid) / "stat")
    return float(st.starttime) if st is not None else None


def popen_waiter(popen: subprocess.Popen[bytes]) -> Callable[[float], bool]:
    """``wait_root`` for end_tree: wait for our own child through its Popen (only it may reap it)."""

    def wait(timeout: float) -> bool:
        try:
            popen.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    return wait


@frozen
class Termination:
    """What ending a tree took: who got SIGTERM, who needed SIGKILL, who survived even that."""

    terminated: list[int]  # got SIGTERM
    killed: list[int]  # needed SIGKILL
    leftovers: list[int]  # still alive after SIGKILL (unkillable, e.g. stuck in D state)
    seconds: float


def _continue_stopped(tracker: JobTracker) -> None:
    """SIGCONT to every process of the job that is stopped (SIGSTOP, Ctrl-Z, a debugger)."""
    import psutil

    for p in tracker.alive():
        try:
            if p.status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP):
                p.send_signal(signal.SIGCONT)
        except psutil.Error:
            continue


def end_tree(
    tracker: JobTracker, grace_s: float, wait_root: Callable[[float], bool], first_signal: int = signal.SIGTERM
) -> Termination:
    """``first_signal`` to the job's root, wait up to ``grace_s`` for it to exit, then SIGKILL every
    process of the job that is left and wait (bounded) for them to go.

    ``wait_root(timeout)`` waits for the root and says whether it exited: the root is our child,
    and only its Popen may reap it (or its exit status is lost)."""
    import psutil

    t0 = time.monotonic()
    tracker.scan()
    terminated: list[int] = []
    try:
        os.kill(tracker.root, first_signal)
        terminated.append(tracker.root)
    except ProcessLookupError:
        pass
    _continue_stopped(tracker)  # a stopped process acts on SIGTERM only once continued
    deadline = t0 + grace_s
    while time.monotonic() < deadline:
        if wait_root(min(0.2, max(0.0, deadline - time.monotonic()))):
            break
        tracker.scan()  # children started during the grace period are part of the tree too
    tracker.scan()
    remaining = tracker.alive()
    killed = []
    for p in remaining:
        try:
            p.send_signal(signal.SIGKILL)
            killed.append(p.pid)
        except psutil.Error:
            continue
    for _ in range(LATE_PASSES):  # a process forked after the last scan (a pool replacing a worker as main died)
        tracker.scan()
        late = [p for p in tracker.alive() if p.pid not in killed and p.pid != tracker.root]
        if not late:
            break
        for p in late:
            with contextlib.suppress(psutil.Error):
                p.send_signal(signal.SIGKILL)
                killed.append(p.pid)
        remaining.extend(late)
    wait_root(2.0)
    _, still = psutil.wait_procs([p for p in remaining if p.pid != tracker.root], timeout=10)
    leftovers = [p.pid for p in still if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    return Termination(terminated, killed, leftovers, time.monotonic() - t0)
