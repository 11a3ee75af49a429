"""One attempt of the job as the run loop keeps it, how it ended, and the loop's injectable clock."""

from __future__ import annotations

import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Protocol

from hangwatch.errors import HangwatchError
from hangwatch.records.run import OnHang, RunState
from hangwatch.records.values import frozen, mutable
from hangwatch.recover.exitcode import END_STATE, EXIT_SUPERVISION_FAILED, ExitStatus, job_exit
from hangwatch.recover.restart import RestartDecision
from hangwatch.supervise.job.held import OutputHold
from hangwatch.supervise.job.stillness import Stillness

if TYPE_CHECKING:
    from pathlib import Path

    from hangwatch.records.evidence import Evidence
    from hangwatch.recover.heal import HealAnswers, HealAsk
    from hangwatch.supervise.job.job import Job
    from hangwatch.supervise.progress.checkpoints import Checkpoint
    from hangwatch.supervise.progress.detector import HistoryBound, StallDetector
    from hangwatch.supervise.stall.judgement import Judgement
    from hangwatch.supervise.stall.look import Look, Unseen


class Clock(Protocol):
    """Time for the run loop: a clock every interval is measured on, and a wait that a signal can cut short."""

    def now(self) -> float:
        """Seconds, on a clock that never steps (Unix time at the start of the run, then monotonic)."""
        ...

    def from_wall(self, t: float) -> float:
        """A Unix time (a heartbeat's, an output chunk's) on this clock."""
        ...

    def wait(self, wake: threading.Event, timeout_s: float) -> None:
        """Sleep up to ``timeout_s``, less if ``wake`` is set."""
        ...


class SystemClock:
    """The real clock: Unix time when the run started, advanced by the monotonic clock. A step of the wall
    clock (NTP, a VM resumed with a corrected clock) is neither a stall nor a negative interval; wall time is
    kept for what a person reads (events, the deadline). ``wall``/``mono`` are injectable for tests."""

    def __init__(self, wall: Callable[[], float] = time.time, mono: Callable[[], float] = time.monotonic) -> None:
        self._wall, self._mono = wall, mono
        self._origin = wall() - mono()

    def now(self) -> float:
        """Unix time at the start, then monotonic."""
        return self._origin + self._mono()

    def from_wall(self, t: float) -> float:
        """A Unix time read now (a heartbeat, an output chunk), on this clock: the wall clock's steps so far
        are taken out."""
        return t + (self.now() - self._wall())

    def wait(self, wake: threading.Event, timeout_s: float) -> None:
        """Sleep up to ``timeout_s``, less if ``wake`` is set."""
        wake.wait(timeout_s)
        wake.clear()


Capture = Callable[[int, float], "Evidence"]  # pid, window seconds -> evidence (raises CaptureError)


class SupervisionFailed(HangwatchError):
    """The run loop kept failing; the job was ended cleanly."""

    exit_code = EXIT_SUPERVISION_FAILED


@frozen
class AttemptEnd:
    """How an attempt ended, the run's exit status so far, and whether to start another."""

    code: int
    restart: RestartDecision | None = None
    status: ExitStatus | None = None  # why, for the exit-code contract (None: the job's own status)

    @property
    def exit_status(self) -> ExitStatus:
        """Why the run ends here, if it does: the given status, else the job's own."""
        return self.status or job_exit(self.code)

    @property
    def final_state(self) -> RunState | None:
        """The state the run ends in (None: another attempt follows, and its detector says)."""
        if self.restart is not None and self.restart.restart:
            return None
        return END_STATE.get(self.exit_status.reason)


# --- outcomes: what a collaborator asks of the attempt; the run loop alone applies them ----------------------
@frozen
class Report:
    """An incident for a job that is alive or waiting, not (yet) hung: nothing is done to it (``when``: why not)."""

    judgement: Judgement
    when: str


@frozen
class Extend:
    """Alive without progress: more time from ``at``, never past --max-slow nor ``bound`` (the detector's
    own check, made by the judge before it asked); ``report`` follows once it is given."""

    at: float
    bound: HistoryBound | None = None
    report: Report | None = None


@frozen
class Hold:
    """Waiting by design (peers at rendezvous, bounded by the judge's own timeout): not suspect again before
    ``until``; ``report`` follows."""

    until: float
    report: Report | None = None


@frozen
class Declare:
    """Hung: the attempt is marked hung, then the incident handler records the judgement and acts on it."""

    judgement: Judgement


@frozen
class Reopen:
    """A hung attempt is judged again now: healed and still not moving, or the heal did not take."""


@frozen
class CaptureNow:
    """Another node asked for a capture: the attempt becomes suspect without waiting for its threshold."""


@frozen
class EndJob:
    """End the attempt's whole tree: ``first`` (SIGTERM), --kill-grace, then SIGKILL; then the attempt ends as
    ``then`` says, or as ``then`` makes of the job's own exit code read once its tree is ended (None: not known).
    ``action``: the `action` event written after the tree ended (what was done, for a hang), with ``fields``."""

    reason: str
    then: AttemptEnd | Callable[[int | None], AttemptEnd]
    first: int = signal.SIGTERM
    action: str | None = None
    fields: tuple[tuple[str, object], ...] = ()


@frozen
class LookAt:
    """A judge asks for a look at the job (over ``window``; None: the capture window): the loop takes it, with the
    progress that arrived meanwhile fed to the detector, then hands it to ``then`` and applies what that returns.
    The judge never takes a look itself: the detector is written by the loop, before the judge reads it again."""

    window: float | None
    then: Callable[[Look | Unseen], Outcome]


Outcome = Extend | Hold | Report | Declare | Reopen | CaptureNow | LookAt | EndJob | AttemptEnd | None


@mutable
class AttemptSteps:
    """The steps an attempt reported (progress/tracking.py writes them)."""

    max_step: int | None = None
    progressed: bool = False
    first_step: int | None = None  # the first and newest step this attempt reported
    first_from_beat: bool = False  # first_step came from a heartbeat (the trainer's own step)
    last_step: int | None = None
    beat_steps: bool = False  # heartbeats carry a step (optimizer steps); else the log's counter names it
    # The job's own step across attempts (the log's counter, or a trainer's global step): first and newest.
    first_global: int | None = None
    last_global: int | None = None
    global_points: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=512))  # (at, step)

    def saw_step(self, step: int, beat: bool = False) -> None:
        """A step this attempt reported; ``beat``: a heartbeat's. The first heartbeat's step replaces a first
        step the log's counter gave: a resumed trainer's bar shows 0/40 before it jumps to its global step."""
        if self.first_step is None or (beat and not self.first_from_beat):
            self.first_step = step
            self.first_from_beat = beat
        self.last_step = step


@mutable
class StartupProbes:
    """Startup probes before the first progress signal (stall/startup.py writes them)."""

    next_probe_at: float = float("inf")  # the next startup probe, while no progress signal has come
    still_probes: int = 0  # startup probes in a row that found nothing moving
    note: str | None = None  # the newest probe's finding, for the status line


@mutable
class Suspicion:
    """What the suspect round has found and said about this attempt (stall/suspect.py writes it; the loop clears
    its note and wait when progress comes, and its note when the attempt is declared hung)."""

    capture_retry_at: float = 0.0  # after a failed capture, the next try waits until then
    waiting_reported: bool = False  # a `waiting` incident (peers at rendezvous) was written
    waiting_since: float | None = None  # when a capture first found it waiting for peers (None: not waiting)
    slow_reported: set[tuple[str, str]] = field(default_factory=set)  # (cause, file:function) of `slow` incidents
    slow_noted_at: float | None = None  # the newest `slow` incident or note: repeated at most every 10 minutes
    looked_at: float | None = None  # the last progress whose stall had its first look (once per stall)
    note: str | None = None  # alive or waiting without progress: what, and until when (status, ls, watch)
    # (cause, file:function) -> (the stall: its last progress, the proof of work a capture measured there)
    worked: dict[str, tuple[float, str, str]] = field(default_factory=dict)  # by file:function: (stall, fact, cause)


@mutable
class NodeState:
    """This node's part in a multi-node attempt (nodes/round.py writes it)."""

    captured_for_peer: bool = False


@mutable
class Resume:
    """The checkpoint this attempt was launched from (job/plan.py's answer)."""

    resumed_from: Checkpoint | None = None  # the newest checkpoint when this attempt was launched
    resume_given: bool = False  # it was passed on ({checkpoint} in --resume-arg or a fallback)


@mutable
class Healing:
    """--on-hang heal in this attempt (stall/act.py writes it): the ask in flight, and the last heal done."""

    asking: HealAsk | None = None  # asked, not answered yet
    asked_at: float = 0.0
    healed_at: float | None = None  # a worker was replaced; the job has not moved since
    incident: str | None = None  # the incident the ask in flight was written in
    answers: HealAnswers | None = None  # the job's answers, read as they come
    asked: set[tuple[Path, int]] = field(default_factory=set)  # (batch record, batch) heals were asked for


@mutable
class Attempt:
    """One launch of the job."""

    number: int
    argv: list[str]
    started_at: float
    job: Job
    detector: StallDetector
    action: OnHang = OnHang.REPORT  # what is done on a hang: ours, or the decision all nodes agreed on
    last_scan: float = 0.0
    log_offset: int = 0  # where this attempt's output starts in output.log
    ended_at: float | None = None
    exit_code: int | None = None
    oom_start: int | None = None  # the cgroup's OOM kills at launch: an earlier attempt's are not this crash's
    steps: AttemptSteps = field(default_factory=AttemptSteps)
    startup: StartupProbes = field(default_factory=StartupProbes)
    suspicion: Suspicion = field(default_factory=Suspicion)
    node: NodeState = field(default_factory=NodeState)
    resume: Resume = field(default_factory=Resume)
    heal: Healing = field(default_factory=Healing)
    still: Stillness = field(default_factory=Stillness)  # the kernel's view: the whole job still, and looks due
    held: OutputHold = field(default_factory=OutputHold)  # the reader of hangwatch's own output holding the job
