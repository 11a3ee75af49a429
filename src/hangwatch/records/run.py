"""`hangwatch run`'s records: the run's state, ``summary.json``, event kinds, and the messages the
hangwatches of a multi-node job exchange."""

from __future__ import annotations

from dataclasses import asdict, fields
from enum import Enum
from typing import Any, TypeVar

from hangwatch.records.values import frozen

SUMMARY_SCHEMA = "hangwatch.summary/1"


class RunState(str, Enum):
    """Where a run stands. The first four are the stall detector's; the rest are terminal."""

    STARTING = "starting"
    PROGRESSING = "progressing"
    SUSPECT = "suspect"
    HUNG = "hung"
    FINISHED = "finished"
    CRASHED = "crashed"
    STOPPED = "stopped"


class OnHang(str, Enum):
    """What to do with a hung job (--on-hang), and what the nodes of a run decided (``Decision.action``)."""

    REPORT = "report"
    KILL = "kill"
    RESTART = "restart"
    HEAL = "heal"  # a DataLoader worker's hang: the worker replaced inside the job; any other: as RESTART

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class EventKind(str, Enum):
    """The ``event`` field of each ``events.jsonl`` line."""

    START = "start"
    COORDINATION = "coordination"
    LAUNCH = "launch"
    RESTART = "restart"
    PROGRESS = "progress"
    RECOVERED = "recovered"
    SUSPECT = "suspect"
    EXTENDED = "extended"
    PROBE = "probe"  # a startup probe: the job captured before its first progress signal
    LOOK = "look"  # the first look at a stall, sooner than --min-stall: hung only on a proof of a hang
    STILL_SLOW = "still_slow"  # alive without progress for long: said again, at most every 10 minutes
    REMEDY = "remedy"  # an attempt starts with a remedy the cause chose
    HEAL = "heal"  # --on-hang heal: asked, healed (a worker replaced in the job), or not healed (and why)
    REMEDY_CHOICE = "remedy_choice"  # why that remedy, weighed against --deadline and --budget
    HANDOVER = "handover"  # heartbeats stopped while the log counter advanced: the counter is the signal now
    NODES = "nodes"
    INCIDENT = "incident"
    ACTION = "action"
    TERMINATE = "terminate"
    REMOTE_DECISION = "remote_decision"
    CAPTURE_REQUESTED = "capture_requested"
    GIVE_UP = "give_up"
    JOB_EXIT = "job_exit"
    SIGNAL = "signal"
    PAUSE = "pause"  # the loop did not run for a while (a paused VM, a sleeping laptop, a stopped group)
    INTERNAL_ERROR = "internal_error"
    WATCHDOG = "watchdog"  # a supervision round took longer than HANGWATCH_WATCHDOG_S
    CAPTURE_ABANDONED = "capture_abandoned"
    CAPTURE_FAILED = "capture_failed"  # a look could not read the job (gone, unreadable, a capture still stuck)
    OVER_BUDGET = "over_budget"  # the projected total cost passed --budget
    DEADLINE = "deadline"  # the projected finish crossed --deadline (or came back before it)
    CHECKPOINT = "checkpoint"  # the job wrote a checkpoint (path, step, kind): a restart can resume from it
    RESUME = "resume"  # a restart passes the newest checkpoint on (--resume-arg, {checkpoint} in fallbacks)
    REDONE = "redone"  # a restarted attempt does steps again that the one before had done
    FROM_ZERO = "from_zero"  # a restart started again from step 0 although a checkpoint existed
    GPU_RELEASE = "gpu_release"  # before a restart: how long the ended job's GPU memory took to be freed
    NODES_ENDED = "nodes_ended"  # multi-node, before a restart: every node ended its part of the attempt (or not)
    COORD_STATS = "coord_stats"  # multi-node: messages and bytes this node sent the store, per round and in all
    EXIT = "exit"


@frozen
class Event:
    """One line of ``events.jsonl``: when, what kind, and the kind's own fields."""

    at: float
    kind: str  # an EventKind value; kept as text so that files from newer versions still read
    fields: dict[str, Any]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        """Read one parsed line."""
        return cls(
            at=float(d["at"]), kind=str(d["event"]), fields={k: v for k, v in d.items() if k not in ("at", "event")}
        )


@frozen
class RunSummary:
    """``summary.json``: the run's accounting, kept current while it runs and final at its end."""

    command: tuple[str, ...]
    run_dir: str
    state: RunState
    attempts: int
    exit_code: int | None
    started_at: float
    ended_at: float | None
    wall_seconds: float
    last_step: int | None
    incidents: int
    stalled_seconds: float
    goodput: float | None  # None: no counter or heartbeat was ever seen, so nobody knows
    progress_signal: str = "none"  # the strongest signal seen: none | output | counter | heartbeat
    total_steps: int | None = None  # the N of an `n/N` counter, when the job prints one
    steps_per_s: float | None = None  # the recent step rate
    eta_seconds: float | None = None  # time to total_steps at that rate
    cost_per_hour: float | None = None
    cost_usd: float | None = None
    wasted_usd: float | None = None
    # Each remedy hangwatch applied on a restart: attempt, cause, remedy, applied (text), progressed_past
    # (the attempt went past the step the previous one stalled at), steps_per_s, rate_vs_previous.
    remedies: tuple[dict[str, Any], ...] = ()
    projected_cost_usd: float | None = None  # the cost to finish (eta_seconds at cost_per_hour)
    budget_usd: float | None = None
    last_progress_at: float | None = None  # the newest counter or heartbeat (output when there is none)
    # Each attempt: attempt, started_at, ended_at, first_step, last_step, steps_per_s, applied (the
    # fallback or remedy it ran with, "" for the command as given), exit_code.
    attempt_stats: tuple[dict[str, Any], ...] = ()
    host: str = ""  # where the supervisor runs
    supervisor_pid: int | None = None  # with host: whether the run is still watched (`hangwatch ls`)
    updated_at: float | None = None  # when this file was written
    note: str | None = None  # alive or waiting without progress: what, and when it will be declared hung
    # The current attempt's progress history: intervals, median_s, longest_s, and bound_s (an alive job
    # with no progress for this long is hung; a DataLoader worker's batch gets it x its workers).
    history: dict[str, Any] | None = None
    # Why the run ended (recover/exitcode.py): finished, crashed, hung_requeue, hung_final, over_budget,
    # deadline, signal, supervision_failed; one sentence of why; whether a scheduler should requeue it.
    exit_reason: str | None = None
    exit_why: str | None = None
    requeue: bool | None = None
    # --deadline (unix time), the projected finish (now + ETA; the end once it ended), whether that is in
    # time, and by how much (negative: late).
    # The newest checkpoint the job wrote (path, step, kind, attempt, rank), and the steps attempts did
    # again after a restart (from where they resumed up to where the attempt before had got): waste.
    checkpoint: dict[str, Any] | None = None
    redone_steps: int = 0
    redone_seconds: float = 0.0
    heals: int = 0  # DataLoader workers replaced inside the job (--on-hang heal)
    skipped_samples: int = 0  # samples heal left out (skipped.jsonl lists them)
    deadline: float | None = None
    finish_at: float | None = None
    meets_deadline: bool | None = None
    slack_seconds: float | None = None
    schema: str = SUMMARY_SCHEMA

    def to_dict(self) -> dict[str, Any]:
        """The JSON object; the cost fields appear only when a price is known."""
        d = asdict(self)
        d["state"] = self.state.value
        d["command"] = list(self.command)
        d["remedies"] = [dict(r) for r in self.remedies]
        d["attempt_stats"] = [dict(r) for r in self.attempt_stats]
        if self.cost_per_hour is None:
            for k in ("cost_per_hour", "cost_usd", "wasted_usd", "projected_cost_usd", "budget_usd"):
                d.pop(k)
        return {"schema": d.pop("schema"), **d}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunSummary:
        """Read a ``summary.json`` (unknown fields from newer versions are ignored)."""
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        kw["state"] = RunState(kw.get("state", "starting"))
        kw["command"] = tuple(kw.get("command", ()))
        kw["remedies"] = tuple(kw.get("remedies", ()))
        kw["attempt_stats"] = tuple(kw.get("attempt_stats", ()))
        return cls(**kw)


# --- between the hangwatches of a multi-node job ------------------------------------------------------
M = TypeVar("M", bound="Message")


@frozen
class Message:
    """A coordination message: a dataclass that travels as JSON through the store."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object."""
        return asdict(self)

    @classmethod
    def from_dict(cls: type[M], d: dict[str, Any]) -> M:
        """Read a message, ignoring fields this version does not know."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@frozen
class NodeLive(Message):
    """A node's heartbeat in the store."""

    at: float
    attempt: int
    state: str
    step: int | None


@frozen
class DecidedFinding(Message):
    """The root finding of a node that proposed a decision (its JSON object), stored beside the decision and
    read once by a node that follows it: its incident names the culprit the decider saw, even when its own
    look comes too late to see it (its ranks already failing). Not in the decision, which every round reads."""

    finding: dict[str, Any]


@frozen
class CaptureRequest(Message):
    """A node saw a stall and asks every node to capture its ranks."""

    by: int
    at: float


@frozen
class NodeSummary(Message):
    """A node's captured ranks, condensed for merging across nodes."""

    host: str
    ranks: list[dict[str, Any]]
    verdict: str
    cause: str


@frozen
class Decision(Message):
    """What every node does about an attempt: the first proposal stored wins."""

    by: int
    action: OnHang
    cause: str | None = None
    # The exit the deciding node proposes when the run ends here (recover/exitcode.py): every node of a
    # run exits with the same code, so a scheduler sees one answer.
    code: int | None = None
    reason: str | None = None
    why: str | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Decision:
        """Read a decision (its action as an ``OnHang``)."""
        known = {f.name for f in fields(cls)}
        kw: dict[str, Any] = {k: (OnHang(v) if k == "action" else v) for k, v in d.items() if k in known}
        return cls(**kw)
