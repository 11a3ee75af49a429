"""The exit-code contract for schedulers: whether a hung job is worth a requeue, told apart from a
job stopped over its budget or deadline and from supervision that failed.

    0          the job finished
    job's own  the job ended by itself with an error (128+N when killed by signal N)
    124        hung, worth a requeue: the first time this hang was seen, a remedy may still help
    125        hung, do not requeue: the same cause and place twice in a row, no remedy left, or a cause
               no requeue can fix (a job waiting at a prompt)
    122        stopped over its budget or deadline (--on-over-budget stop)
    123        supervision failed; the job was ended cleanly
    2          usage error, nothing was started

Slurm: requeue on 124 only (``scontrol requeue`` in the batch script); srun reports the highest of its
tasks' codes, and every node of one run exits with the same code (the deciding node's, through the
store). Kubernetes: a ``podFailurePolicy`` rule ``FailJob`` on ``onExitCodes: NotIn [124]`` leaves
only 124 to the Job's ``backoffLimit``.

A run directory that is used again (a requeued job with the same ``--run-dir``) keeps its incidents:
an earlier run's hang counts as the previous one. Pure: tested on tables.
"""

from __future__ import annotations

import logging
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from hangwatch.causes import CATALOGUE, Requeue
from hangwatch.records.layout import RunLayout
from hangwatch.records.run import Decision, RunState
from hangwatch.records.values import frozen

if TYPE_CHECKING:
    from hangwatch.records.incident import Finding

log = logging.getLogger(__name__)

EXIT_HUNG_REQUEUE = 124
EXIT_HUNG_FINAL = 125
EXIT_STOPPED = 122
EXIT_SUPERVISION_FAILED = 123

# Causes a requeue cannot fix, causes that are a bug at a line of the user's code by nature, and causes that
# can pass by themselves (however they were proven): the catalogue's requeue classes.
NO_REQUEUE: dict[str, str] = {c: i.requeue_why for c, i in CATALOGUE.items() if i.requeue_why}
DETERMINISTIC: frozenset[str] = frozenset(c for c, i in CATALOGUE.items() if i.requeue == Requeue.DETERMINISTIC)
TRANSIENT: frozenset[str] = frozenset(c for c, i in CATALOGUE.items() if i.requeue == Requeue.TRANSIENT)


def deterministic(finding: Finding) -> bool:
    """A bug at a line of user code that hangs the same way again: a deadlock, a spin, a prompt, or a hang
    proven at the user's line (a wait with no timeout that nothing can end, ranks in different collectives)."""
    if finding.cause in DETERMINISTIC:
        return True
    return (
        finding.cause not in TRANSIENT
        and finding.proves_hang
        and finding.where is not None
        and finding.where.file is not None
    )


class ExitReason(str, Enum):
    """Why the run ended, as summary.json's ``exit_reason`` says it."""

    FINISHED = "finished"
    CRASHED = "crashed"
    HUNG_REQUEUE = "hung_requeue"
    HUNG_FINAL = "hung_final"
    OVER_BUDGET = "over_budget"
    DEADLINE = "deadline"
    SIGNAL = "signal"  # hangwatch was told to stop (Ctrl-C twice, SIGTERM, SIGHUP): the job's own status
    SUPERVISION_FAILED = "supervision_failed"

    @property
    def label(self) -> str:
        """What a person reads: ``hung, do not requeue``."""
        return _LABELS[self]


_LABELS = {
    ExitReason.FINISHED: "finished",
    ExitReason.CRASHED: "crashed",
    ExitReason.HUNG_REQUEUE: "hung, worth a requeue",
    ExitReason.HUNG_FINAL: "hung, do not requeue",
    ExitReason.OVER_BUDGET: "stopped over budget",
    ExitReason.DEADLINE: "stopped at the deadline",
    ExitReason.SIGNAL: "stopped by a signal",
    ExitReason.SUPERVISION_FAILED: "supervision failed",
}


@frozen
class Hang:
    """One hang of the run: its cause and place (``file:line``, or the function)."""

    cause: str
    place: str

    @classmethod
    def of(cls, finding: Finding) -> Hang:
        """The hang a root finding names."""
        w = finding.where
        if w is None:
            return cls(finding.cause, "")
        return cls(finding.cause, f"{w.file}:{w.line}" if w.file else (w.function or ""))

    def text(self) -> str:
        """``cause at place``."""
        return f"{self.cause} at {self.place}" if self.place else self.cause


@frozen
class ExitStatus:
    """The code a run exits with, its reason id, and one sentence of why."""

    code: int
    reason: ExitReason
    why: str

    @property
    def requeue(self) -> bool:
        """Whether a scheduler should requeue the job."""
        return self.code == EXIT_HUNG_REQUEUE


def hung_exit(
    hang: Hang, earlier: list[Hang], remedies_left: bool | None, futile: bool = False, bug: str | None = None
) -> ExitStatus:
    """The exit of a run that ended a hung job. ``earlier``: the run's hangs before this one, oldest
    first (earlier runs in the same run directory included); ``remedies_left``: None when the cause has
    no remedy ladder at all, else whether one of its remedies was not applied yet; ``futile``: restarts
    stopped because attempts in a row made no new progress; ``bug``: why the hang is a deterministic bug at
    a line of user code (None: it may pass), which ends the run with 125 the first time unless a remedy is
    left to try."""
    if hang.cause in NO_REQUEUE:
        return ExitStatus(EXIT_HUNG_FINAL, ExitReason.HUNG_FINAL, f"{hang.text()}: {NO_REQUEUE[hang.cause]}")
    if earlier and earlier[-1] == hang:
        return ExitStatus(
            EXIT_HUNG_FINAL,
            ExitReason.HUNG_FINAL,
            f"{hang.text()} hung twice in a row; a requeue would hang there again",
        )
    if bug is not None and remedies_left is not True:
        return ExitStatus(
            EXIT_HUNG_FINAL,
            ExitReason.HUNG_FINAL,
            f"{hang.text()}: a bug at a line of the job's code ({bug}); a requeue would hang there again",
        )
    if remedies_left is False:
        return ExitStatus(
            EXIT_HUNG_FINAL, ExitReason.HUNG_FINAL, f"{hang.text()}: every remedy for {hang.cause} was tried"
        )
    if futile:
        return ExitStatus(
            EXIT_HUNG_FINAL, ExitReason.HUNG_FINAL, f"{hang.text()}: the last attempts made no new progress"
        )
    seen = sum(1 for h in earlier if h.cause == hang.cause)
    first = "first time this cause was seen" if not seen else f"seen {seen} time(s) before, elsewhere"
    if bug is not None:  # remedies_left: a restart with the next remedy changes what runs
        return ExitStatus(
            EXIT_HUNG_REQUEUE,
            ExitReason.HUNG_REQUEUE,
            f"{hang.text()}: {first}; a remedy of its ladder is still untried",
        )
    return ExitStatus(
        EXIT_HUNG_REQUEUE,
        ExitReason.HUNG_REQUEUE,
        f"{hang.text()}: {first}; it can pass by itself, so a requeue may pass it",
    )


def stopped_exit(reason: ExitReason, text: str) -> ExitStatus:
    """Stopped over the budget or the deadline."""
    return ExitStatus(EXIT_STOPPED, reason, text)


def job_exit(code: int, signalled: bool = False) -> ExitStatus:
    """The job ended by itself (or was stopped by a signal to hangwatch): its own status."""
    if signalled:
        return ExitStatus(code, ExitReason.SIGNAL, "hangwatch was told to stop; the job's own status")
    if code == 0:
        return ExitStatus(0, ExitReason.FINISHED, "the job finished")
    return ExitStatus(code, ExitReason.CRASHED, f"the job exited with status {code}")


def earlier_hangs(run_dir: Path) -> list[Hang]:
    """The hangs an earlier run left in this run directory (incidents with verdict ``hung``), oldest first."""
    out: list[Hang] = []
    layout = RunLayout(run_dir)
    for path in layout.damaged():
        log.warning("ignoring an unreadable %s in %s", path, run_dir)
    for number, data in layout.incident_dicts():
        try:
            if data.get("verdict") != "hung" or not data.get("findings"):
                continue
            root = data["findings"][0]
            w = root.get("where") or {}
            place = f"{w['file']}:{w['line']}" if w.get("file") else str(w.get("function") or "")
            out.append(Hang(str(root["cause"]), place))
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("ignoring an unreadable incident %03d in %s", number, run_dir)
    return out


# The state a run ends in, by its exit reason (a node that follows another node's decision ends in the
# state the decider's exit names). Supervision that failed leaves the state the run had.
END_STATE = {
    ExitReason.FINISHED: RunState.FINISHED,
    ExitReason.CRASHED: RunState.CRASHED,
    ExitReason.HUNG_REQUEUE: RunState.HUNG,
    ExitReason.HUNG_FINAL: RunState.HUNG,
    ExitReason.OVER_BUDGET: RunState.STOPPED,
    ExitReason.DEADLINE: RunState.STOPPED,
    ExitReason.SIGNAL: RunState.STOPPED,
}


def remote_status(called: Decision) -> ExitStatus:
    """The exit the deciding node proposed, for this node to end with the same code (a decision without
    one, from an older version: 124 for a hang it ended)."""
    why = called.why or f"node {called.by} decided to {called.action} the job ({called.cause})"
    try:
        return ExitStatus(
            called.code if called.code is not None else EXIT_HUNG_REQUEUE,
            ExitReason(called.reason or ExitReason.HUNG_REQUEUE.value),
            why,
        )
    except ValueError:  # a newer version's reason: its code, read as a hang's
        return ExitStatus(called.code or EXIT_HUNG_REQUEUE, ExitReason.HUNG_FINAL, why)
