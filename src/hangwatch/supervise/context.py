"""What the run loop and its collaborators share: the run's settings, its writers (the run directory, output.log,
the status line, notifications) and records (attempts, checkpoints, hangs), and the few acts every one of them
does (say a line, decide with the other nodes). Ending the job is the loop's alone: a collaborator asks for it
with ``EndJob`` (attempt.py).

The supervisor opens one ``RunContext`` (``open_run``) and hands it to each collaborator (``books``, ``tracking``,
``capturing``, ``suspect``, ``act``, ``startup``, ``signals``, ``node_round``); none of them reaches back into the
supervisor. What a collaborator decides about an attempt it returns as an outcome (attempt.py), which the loop
applies.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import field
from typing import TYPE_CHECKING

from hangwatch.records.run import Decision, EventKind, OnHang, RunState
from hangwatch.records.values import mutable
from hangwatch.recover.exitcode import ExitStatus, Hang, remote_status

if TYPE_CHECKING:
    from hangwatch.records.incident import Finding
    from hangwatch.recover.remedy import RemedyPlan
    from hangwatch.recover.restart import RestartPolicy
    from hangwatch.supervise.attempt import Attempt, Clock
    from hangwatch.supervise.books.accounting import Ledger
    from hangwatch.supervise.books.notify import Notifier
    from hangwatch.supervise.books.rundir import RunDir
    from hangwatch.supervise.config import RunConfig
    from hangwatch.supervise.job.launch import OutputLog, StatusLine
    from hangwatch.supervise.nodes.protocol import NodeCoordination
    from hangwatch.supervise.progress.checkpoints import Checkpoint
    from hangwatch.supervise.progress.intake import ProgressIntake


class Every:
    """A chore done at most once per ``seconds``; its owner keeps one for each."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = float("-inf")  # when it was last done

    def due(self, now: float) -> bool:
        """Whether it is due; if so, it counts as done now."""
        if now - self.at < self.seconds:
            return False
        self.at = now
        return True


@mutable
class RunContext:
    """One run's shared state. Attempts run one at a time; the newest is ``attempts[-1]``.

    Three kinds of field, each record with one writer (tests/unit/test_structure.py checks it): the settings,
    never written; the run's services, which every collaborator calls and which guard their own state (the run
    directory, output.log, the status line, notifications, the progress intake, the ledger's methods, the
    restart policy and remedies); and the records, each written by the module named beside it. What belongs to
    one attempt lives in the ``Attempt`` (attempt.py)."""

    # the settings
    cfg: RunConfig
    clock: Clock
    # the services
    rundir: RunDir
    notifier: Notifier
    output: OutputLog
    status: StatusLine
    intake: ProgressIntake
    ledger: Ledger  # its counts: incidents and heals by stall/act.py, steps and redone work by progress/tracking.py
    policy: RestartPolicy
    remedies: RemedyPlan
    # the records
    hangs: list[Hang]  # stall/act.py: hangs of this run and of earlier runs in the same directory (a requeue)
    attempts: list[Attempt] = field(default_factory=list)  # the loop
    checkpoints: list[Checkpoint] = field(default_factory=list)  # progress/tracking.py: what the job saved
    incident_counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # stall/act.py: (cause, verdict)
    nodes: NodeCoordination | None = None  # nodes/round.py, once connected
    final_state: RunState | None = None  # the loop: set once the run has ended
    exit_status: ExitStatus | None = None  # the loop: why the run ended (the exit-code contract)
    exit_code: int | None = None  # the loop
    doing: str = "watching"  # ``busy``: what the loop is doing now, in words, for the watchdog's event
    wake: threading.Event = field(default_factory=threading.Event)  # cuts the loop's wait short
    signalled: threading.Event = field(default_factory=threading.Event)  # job/signals.py: hangwatch was told to stop

    @property
    def state(self) -> RunState:
        """The run's state: the current attempt's detector state until the run ends."""
        if self.final_state is not None:
            return self.final_state
        return RunState(self.attempts[-1].detector.state.value) if self.attempts else RunState.STARTING

    def say(self, text: str) -> None:
        """A line of hangwatch's own on stderr (the status line erased first). A stderr nobody reads any more (a
        closed terminal, the pipe of a parent that died) loses the line, never the run: a SIGTERM that came with it
        must still stop the job, and the events keep the record. From then on hangwatch's stderr is the null device
        (an unflushable stderr at exit would turn the exit code into 120)."""
        try:
            self.status.clear()
            sys.stderr.write(text if text.endswith("\n") else text + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - hangwatch's stderr for the rest of the run

    @contextmanager
    def busy(self, doing: str) -> Iterator[None]:
        """What the loop does meanwhile (a capture, a wait for other nodes), for the watchdog; then what it did."""
        before, self.doing = self.doing, doing
        try:
            yield
        finally:
            self.doing = before

    def agree(
        self, attempt: int, action: OnHang, status: ExitStatus, cause: str | None, finding: Finding | None = None
    ) -> tuple[OnHang, ExitStatus | None]:
        """Decide with the other nodes, then follow the winner: one decision per attempt for all nodes, the
        first proposed wins (with its exit and ``finding``, this node's root). The action every node takes, and
        the exit status to end with when another node decided it (None: this node's own, or a single-node run)."""
        if self.nodes is None:
            return action, None
        if finding is not None:
            self.nodes.share_finding(attempt, finding)
        won = self.nodes.decide(
            attempt, Decision(self.nodes.node, action, cause, status.code, status.reason.value, status.why)
        )
        if won.by == self.nodes.node or won.action == OnHang.REPORT:
            return won.action, None
        self.rundir.event(EventKind.REMOTE_DECISION, attempt=attempt, **won.to_dict())
        return won.action, remote_status(won)

    def total(self) -> tuple[int | None, bool]:
        """The steps the job will run, and whether that total is trustworthy enough to stop a job on:
        --total-steps, else the trainer's max steps (autobeat), else the N of the log's `n/N` (any bar)."""
        if self.cfg.total_steps:
            return self.cfg.total_steps, True
        if self.intake.trainer_total:
            return self.intake.trainer_total, True
        return self.intake.counter_total, False
