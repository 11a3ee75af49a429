"""One attempt of the job as the run loop keeps it, how it ended, and the loop's injectable clock."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from hangwatch.errors import HangwatchError
from hangwatch.recover.exitcode import EXIT_SUPERVISION_FAILED, ExitStatus
from hangwatch.recover.restart import RestartDecision
from hangwatch.supervise.checkpoints import Checkpoint
from hangwatch.supervise.config import OnHang
from hangwatch.supervise.detector import StallDetector
from hangwatch.supervise.job import Job

if TYPE_CHECKING:
    from hangwatch.evidence import Evidence


class Clock(Protocol):
    """Time for the run loop: the wall clock, and a wait that a signal can cut short."""

    def now(self) -> float:
        """Unix time."""
        ...

    def wait(self, wake: threading.Event, timeout_s: float) -> None:
        """Sleep up to ``timeout_s``, less if ``wake`` is set."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> float:
        """Unix time."""
        return time.time()

    def wait(self, wake: threading.Event, timeout_s: float) -> None:
        """Sleep up to ``timeout_s``, less if ``wake`` is set."""
        wake.wait(timeout_s)
        wake.clear()


Capture = Callable[[int, float], "Evidence"]  # pid, window seconds -> evidence (raises CaptureError)


class SupervisionFailed(HangwatchError):
    """The run loop kept failing; the job was ended cleanly."""

    exit_code = EXIT_SUPERVISION_FAILED


@dataclass(frozen=True)
class AttemptEnd:
    """How an attempt ended, the run's exit status so far, and whether to start another."""

    code: int
    restart: RestartDecision | None = None
    status: ExitStatus | None = None  # why, for the exit-code contract (None: the job's own status)


@dataclass
class Attempt:
    """One launch of the job."""

    number: int
    argv: list[str]
    started_at: float
    job: Job
    detector: StallDetector
    max_step: int | None = None
    progressed: bool = False
    action: OnHang = OnHang.REPORT  # what is done on a hang: ours, or the decision all nodes agreed on
    captured_for_peer: bool = False
    last_scan: float = 0.0
    next_probe_at: float = float("inf")  # the next startup probe, while no progress signal has come
    log_offset: int = 0  # where this attempt's output starts in output.log
    capture_retry_at: float = 0.0  # after a failed capture, the next try waits until then
    first_step: int | None = None  # the first and newest step this attempt reported
    last_step: int | None = None
    ended_at: float | None = None
    still_probes: int = 0  # startup probes in a row that found nothing moving
    waiting_reported: bool = False  # a `waiting` incident (peers at rendezvous) was written
    waiting_since: float | None = None  # when a capture first found it waiting for peers (None: not waiting)
    slow_reported: set[tuple[str, str]] = field(default_factory=set)  # (cause, file:function) of `slow` incidents
    slow_noted_at: float | None = None  # the newest `slow` incident or note: repeated at most every 10 minutes
    looked_at: float | None = None  # the last progress whose stall had its first look (once per stall)
    exit_code: int | None = None
    beat_steps: bool = False  # heartbeats carry a step (optimizer steps); else the log's counter names it
    # The job's own step across attempts (the log's counter, or a trainer's global step): first and newest.
    first_global: int | None = None
    last_global: int | None = None
    resumed_from: Checkpoint | None = None  # the newest checkpoint when this attempt was launched
    resume_given: bool = False  # it was passed on ({checkpoint} in --resume-arg or a fallback)
    global_points: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=512))  # (at, step)
    oom_start: int | None = None  # the cgroup's OOM kills at launch: an earlier attempt's are not this crash's

    def saw_step(self, step: int) -> None:
        """A step this attempt reported."""
        if self.first_step is None:
            self.first_step = step
        self.last_step = step
