"""A running attempt of the job, as the run loop sees it: poll, scan, end. One small interface, so
the loop can be driven by a scripted job in tests."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Protocol

from hangwatch.recover.terminate import JobTracker, Termination, end_tree, popen_waiter
from hangwatch.supervise.launch import Launched, OnChunk


class Job(Protocol):
    """What the run loop needs of a launched job."""

    @property
    def pid(self) -> int:
        """The job's root process."""
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

    def end(self, grace_s: float, first_signal: int = signal.SIGTERM) -> Termination:
        """``first_signal``, ``grace_s``, then SIGKILL to the whole tree."""
        ...

    def forward(self, signum: int) -> None:
        """Send ``signum`` to the job's process group (Ctrl-C)."""
        ...

    def drain(self, timeout_s: float) -> None:
        """Wait (bounded) until the job's last output has been read."""
        ...


# argv, environment, where each chunk of output goes -> the started job
Launcher = Callable[[list[str], dict[str, str], OnChunk], Job]


class LaunchedJob:
    """A real job: the Popen of the exec shim, its output pumps, and the tracker of its tree."""

    def __init__(self, launched: Launched) -> None:
        self.launched = launched
        self.tracker = JobTracker(launched.pid)

    @property
    def pid(self) -> int:
        """The job's root process."""
        return self.launched.pid

    def poll(self) -> int | None:
        """The root's exit code, None while it runs."""
        return self.launched.popen.poll()

    def scan(self) -> None:
        """Remember every process of the job seen now."""
        self.tracker.scan()

    def leftovers(self) -> list[int]:
        """Processes of the job still alive."""
        return [p.pid for p in self.tracker.alive()]

    def end(self, grace_s: float, first_signal: int = signal.SIGTERM) -> Termination:
        """End the whole tree; then wait (bounded) for the last output."""
        term = end_tree(self.tracker, grace_s, popen_waiter(self.launched.popen), first_signal=first_signal)
        self.launched.join_pumps(5.0)
        return term

    def forward(self, signum: int) -> None:
        """Send ``signum`` to the job's process group."""
        try:
            os.killpg(self.launched.pid, signum)
        except ProcessLookupError:
            pass

    def drain(self, timeout_s: float) -> None:
        """Wait (bounded) for the output pumps to read the last bytes."""
        self.launched.join_pumps(timeout_s)
