"""A running attempt of the job, as the run loop sees it: poll, scan, end. One small interface, so
the loop can be driven by a scripted job in tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from hangwatch.recover.terminate import Gone, JobTracker, Termination, end_tree, popen_waiter
from hangwatch.supervise.job.launch import Launched, OnChunk


class Job(Protocol):
    """What the run loop needs of a launched job."""

    @property
    def pid(self) -> int:
        """The job's root process."""
        ...

    @property
    def owned(self) -> bool:
        """hangwatch started it (`run`): it ends what is left of it. False for a job it attached to (`attach`): only
        a hang it declared, with --on-hang kill, ends that one; a signal to hangwatch or its own exit leaves it be."""
        ...

    def poll(self) -> int | None:
        """The root's exit code (negative: killed by that signal), None while it runs."""
        ...

    def scan(self) -> None:
        """Remember every process of the job seen now (workers come and go)."""
        ...

    def leftovers(self) -> list[int]:
        """Processes of the job still alive (after the root exited: its orphans)."""
        ...

    def known_pids(self) -> list[int]:
        """Every process of the job ever seen (alive or not)."""
        ...

    def vanished(self) -> list[Gone]:
        """The processes of the job seen gone, oldest first (the last few dozen)."""
        ...

    def end(self, grace_s: float, first_signal: int = signal.SIGTERM) -> Termination:
        """``first_signal``, ``grace_s``, then SIGKILL to the whole tree."""
        ...

    def forward(self, signum: int) -> None:
        """Send ``signum`` to the job's process group (Ctrl-C)."""
        ...

    def drain(self, quiet_s: float) -> None:
        """Wait (bounded) until the job's last output has been read, while bytes still move each ``quiet_s``."""
        ...

    def output_held(self) -> int | None:
        """The fd whose reader (of hangwatch's own output) holds the job now (job/held.py), or None."""
        ...

    def close(self) -> None:
        """The attempt is over: release what watched it (the guardian)."""
        ...


# argv, environment, where each chunk of output goes -> the started job
Launcher = Callable[[list[str], dict[str, str], OnChunk], Job]


GUARD = Path(__file__).resolve().parents[2] / "_guard.py"  # hangwatch/_guard.py
EXIT_AFTER_EOF_S = 0.2
DRAIN_QUIET_S = 5.0  # a drain of the job's last output ends once its pumps read nothing for this long
GUARD_START_TIMEOUT_S = 10.0


class TrackedTree:
    """A job's tree as its JobTracker keeps it: what LaunchedJob and AttachedJob share."""

    tracker: JobTracker

    @property
    def pid(self) -> int:
        """The job's root process."""
        return self.tracker.root

    def scan(self) -> None:
        """Remember every process of the job seen now."""
        self.tracker.scan()

    def leftovers(self) -> list[int]:
        """Processes of the job still alive."""
        return self.tracker.alive_pids()

    def known_pids(self) -> list[int]:
        """Every process of the job ever seen."""
        return [self.pid, *(p for p in self.tracker.seen if p != self.pid)]

    def vanished(self) -> list[Gone]:
        """The processes of the job seen gone, oldest first."""
        return list(self.tracker.gone)


class LaunchedJob(TrackedTree):
    """A real job: the Popen of the exec shim, its output pumps, the tracker of its tree, and the
    guardian that ends the tree if hangwatch dies."""

    def __init__(self, launched: Launched, kill_grace_s: float, births: Path | None = None) -> None:
        self.launched = launched
        self.tracker = JobTracker(launched.pid, births, session=launched.pid)  # started in a session of its own
        self._waited_at_eof = False
        self.guard: subprocess.Popen[bytes] | None = None
        # Started from a thread: the run loop goes on watching the job meanwhile (a fork and exec on a
        # busy machine takes ~10 ms, and the job's own start competes for the same cores).
        self._guard_thread = threading.Thread(
            target=self._start_guard, args=(kill_grace_s,), name="hangwatch-guard-start", daemon=True
        )
        self._guard_thread.start()

    def _start_guard(self, kill_grace_s: float) -> None:
        try:
            self.guard = subprocess.Popen(
                [sys.executable, "-S", str(GUARD), str(os.getpid()), str(self.launched.pid), f"{kill_grace_s:g}"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError:
            self.guard = None  # PR_SET_PDEATHSIG on the job still covers its main process

    @property
    def pid(self) -> int:
        """The job's root process."""
        return self.launched.pid

    @property
    def owned(self) -> bool:
        """hangwatch started it."""
        return True

    def poll(self) -> int | None:
        """The root's exit code, None while it runs. Once its output has closed, the first look waits
        up to EXIT_AFTER_EOF_S for the exit that usually follows: the run ends when the job does, not
        a poll later."""
        code = self.launched.popen.poll()
        if code is None and not self._waited_at_eof and self.launched.output_closed():
            self._waited_at_eof = True
            try:
                code = self.launched.popen.wait(timeout=EXIT_AFTER_EOF_S)
            except subprocess.TimeoutExpired:
                code = None  # it closed its output and goes on (a daemon-style job): polled as before
        return code

    def end(self, grace_s: float, first_signal: int = signal.SIGTERM) -> Termination:
        """End the whole tree; then wait (bounded) for the last output."""
        term = end_tree(self.tracker, grace_s, popen_waiter(self.launched.popen), first_signal=first_signal)
        self.launched.join_pumps(DRAIN_QUIET_S)
        return term

    def forward(self, signum: int) -> None:
        """Send ``signum`` to the job's process group."""
        try:
            os.killpg(self.launched.pid, signum)
        except ProcessLookupError:
            pass

    def drain(self, quiet_s: float) -> None:
        """Wait (bounded) for the output pumps to read the last bytes, while they move some each ``quiet_s``."""
        self.launched.join_pumps(quiet_s)

    def output_held(self) -> int | None:
        """The fd whose reader holds the job now, or None."""
        return self.launched.output_held()

    def close(self) -> None:
        """End the guardian (the attempt is over, or hangwatch exits cleanly)."""
        self._guard_thread.join(GUARD_START_TIMEOUT_S)
        if self.guard is not None and self.guard.poll() is None:
            self.guard.kill()
            try:
                self.guard.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
