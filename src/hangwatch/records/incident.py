"""The incident: the ``hangwatch.incident/1`` JSON (docs/inspect.md), one dataclass per object.

``to_dict``/``from_dict`` map one-to-one onto the JSON; tests round-trip them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from hangwatch.causes import Cause, cause_of
from hangwatch.records.values import frozen

if TYPE_CHECKING:
    from hangwatch.records.gpu import GpuEvidence, KernelEvent

SCHEMA = "hangwatch.incident/1"


class Verdict(str, Enum):
    """The verdicts (docs/causes.md)."""

    HUNG = "hung"
    SLOW = "slow"
    PROGRESSING = "progressing"
    STOPPED = "stopped"
    CRASHED = "crashed"
    WAITING = "waiting"  # alive, waiting for peers at rendezvous within --rendezvous-timeout: other nodes may be late


class Action(str, Enum):
    """What hangwatch did about an incident."""

    REPORTED = "reported"
    KILLED = "killed"
    RESTARTED = "restarted"
    HEALED = "healed"  # --on-hang heal: the worker is replaced inside the job, which goes on
    NONE = "none"


@frozen
class FrameRecord:
    """One Python frame."""

    function: str  # the function's name
    file: str  # its file (absolute where the job's path was)
    line: int  # the line it is at

    def short(self) -> str:
        """``function (file.py:line)``."""
        return f"{self.function} ({self.file.rsplit('/', 1)[-1]}:{self.line})"


@frozen
class ThreadRecord:
    """One thread and its stack, innermost frame first."""

    tid: int  # the thread's id (the kernel's; the main thread's is the pid)
    name: str  # its name (Python's, else the kernel's)
    idle: bool  # waiting (not running Python) in every sample of the window
    frames: tuple[FrameRecord, ...] = ()  # its stack in the last sample, innermost first


@frozen
class ProcessRecord:
    """One process of the job as captured."""

    pid: int  # the process
    ppid: int  # its parent
    role: str  # main, dataloader_worker, rank, launcher, compile_worker, child or orphan
    rank: int | None  # its torch.distributed rank, where known
    state: str  # the kernel's state letter at the capture (R, S, D, T, Z)
    cpu_percent: float | None  # its CPU over the window (100: one core)
    cmdline: str  # its command line
    threads: tuple[ThreadRecord, ...] = ()  # each thread and its stack
    # Where its main thread is: the innermost user frame, then the library frame it waits in when
    # they differ (added after the first schema).
    where: tuple[FrameRecord, ...] = ()
    # A DataLoader worker: the batch it holds, as its own loop's locals show it ("holds batch 19 (sample indices
    # 76-79 of Shards)") or, under --on-hang heal, as its iterator recorded it ("has held batch 19 (...) for 45 s");
    # None where neither was read (added after the first schema).
    holds: str | None = None

    @property
    def main_thread(self) -> ThreadRecord | None:
        """The thread whose tid is the pid (else the first one)."""
        return next((t for t in self.threads if t.tid == self.pid), self.threads[0] if self.threads else None)

    def where_text(self) -> str:
        """``train (train.py:40) > _try_get_data (dataloader.py:1133)``, or why there is none."""
        return " > ".join(f.short() for f in self.where) if self.where else "no Python stack"


@frozen
class Where:
    """The innermost user frame that explains a finding (the incident's ``where``)."""

    pid: int  # the process the finding points at
    rank: int | None  # its rank, where known
    tid: int | None  # the thread
    file: str | None  # the innermost user file (absolute where the job's path was)
    line: int | None  # the line in it
    function: str | None  # the function
    code: str | None = None  # the source line's text (added after the first schema)

    def location(self) -> str:
        """``/abs/path/file.py:LINE``."""
        return f"{self.file}:{self.line}"

    def owner(self) -> str:
        """``pid 42`` or ``pid 42, rank 3``."""
        return f"pid {self.pid}" + (f", rank {self.rank}" if self.rank is not None else "")


class ProofKind(str, Enum):
    """What a measured fact proves about a finding."""

    HANG = "hang"  # the job cannot recover by itself: decided at the first look, without waiting for --min-stall
    WORK = "work"  # the job works (its loop walks its data, one long call, bytes moving): never hung by the
    # step history, only by --max-slow


@frozen
class Proof:
    """The measured fact behind a finding's verdict, and what it proves (added after the first schema)."""

    # `hang` (the job cannot recover by itself: decided at the first look) or `work` (bounded by --max-slow only)
    kind: ProofKind
    fact: str  # the measured fact, in words

    def to_dict(self) -> dict[str, str]:
        """``{"kind": "hang", "fact": "..."}``."""
        return {"kind": self.kind.value, "fact": self.fact}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Proof | None:
        """A proof read back from its record (an incident, another node's rank summary): made where it was measured,
        not here."""
        return cls(ProofKind(d["kind"]), str(d["fact"])) if d else None


@frozen
class Finding:
    """A cause, how sure, where, the evidence a person can check, and the fix."""

    cause: Cause  # the cause's id ([Causes](causes.md))
    confidence: float  # how sure, 0 to 1
    summary: str  # what happened, in words (the file and line included)
    where: Where | None  # the place it points at
    evidence: tuple[str, ...] = ()  # the facts a person can check, one a string
    fix: tuple[str, ...] = ()  # what to change, most specific first
    proof: Proof | None = None  # the fact that proves a hang (decides early) or work (not bounded by the history)

    @property
    def proves_hang(self) -> bool:
        """A measured fact says the job cannot recover by itself."""
        return self.proof is not None and self.proof.kind == ProofKind.HANG

    @property
    def proves_work(self) -> bool:
        """A measured fact says the job works."""
        return self.proof is not None and self.proof.kind == ProofKind.WORK

    def to_dict(self) -> dict[str, Any]:
        """The finding as its JSON object."""
        out: dict[str, Any] = _lists(asdict(self))
        out["proof"] = self.proof.to_dict() if self.proof is not None else None
        return out

    @classmethod
    def from_dict(cls, f: dict[str, Any]) -> Finding:
        """Read a finding's JSON object."""
        w, p = f.get("where"), f.get("proof")
        return cls(
            cause=cause_of(f["cause"]),
            confidence=float(f["confidence"]),
            summary=f["summary"],
            where=Where(**w) if w else None,
            evidence=tuple(f["evidence"]),
            fix=tuple(f["fix"]),
            proof=Proof.from_dict(p),
        )


@frozen
class CollectiveRow:
    """A row of the per-rank collectives table (torch's flight recorder): ranks that stand at the same place."""

    ranks: str  # "ranks 0,2-255"
    group: str  # the process group
    last_entered: str  # "all_reduce #58 [[1048576]]"
    last_completed: str  # "#57"
    state: str  # "waits in all_reduce #58 (4.0 MiB, train.py:88)", "idle", "did not answer"


@frozen
class LastProgress:
    """The newest progress before the incident."""

    at: float  # unix time of the newest progress signal
    step: int | None  # its step, where the signal counts steps
    source: str  # where it came from: heartbeat, a counter's kind (tqdm, rich, a log line's), or output


@frozen
class Incident:
    """The incident: verdict, processes, findings (root cause first)."""

    verdict: Verdict  # hung, slow, progressing, stopped, crashed or waiting ([How a stall is decided](stalls.md))
    detected_at: float  # unix time of the capture
    last_progress: LastProgress | None  # the newest progress before it (null: none yet)
    attempt: int  # the attempt (1 for the first launch, and under `inspect`)
    action: Action  # what hangwatch did: reported, killed, restarted, healed or none
    processes: tuple[ProcessRecord, ...]  # every process of the job as captured
    findings: tuple[Finding, ...]  # root cause first, then what else was found
    schema: str = SCHEMA  # always `hangwatch.incident/1`
    window_seconds: float | None = None  # how long the job was sampled (an addition)
    notes: tuple[str, ...] = field(default=())  # capture problems (an addition)
    remedy: str | None = None  # what the restart applies for this cause, when hangwatch chose it (an addition)
    gpu: GpuEvidence | None = None  # the GPUs over the window, and who held their memory (an addition)
    kernel: tuple[KernelEvent, ...] = ()  # kernel log lines since the job started that matter (an addition)
    collectives: tuple[CollectiveRow, ...] = ()  # every rank's collectives, from torch's flight recorder (an addition)
    graph: dict[str, Any] | None = None  # the wait-for graph: nodes, edges, chains (diagnose/graph.py; an addition)

    def finding_pids(self) -> frozenset[int]:
        """The pids the findings point at (``where.pid``)."""
        return frozenset(f.where.pid for f in self.findings if f.where is not None)

    @property
    def root_cause(self) -> Finding | None:
        """``findings[0]``, if any."""
        return self.findings[0] if self.findings else None

    def root_chain_record(self) -> dict[str, Any] | None:
        """The wait-for graph's chain behind the root cause (it starts, passes or ends at the root's process),
        else the first chain with a verdict; None without a graph."""
        chains = (self.graph or {}).get("chains") or []
        root = self.root_cause
        pid = f"pid:{root.where.pid}" if root is not None and root.where is not None else None
        pick = next(
            (
                c
                for c in chains
                if pid in (c.get("waiter"), c.get("end"), *(h.get("holder") for h in c.get("hops", ())))
            ),
            None,
        )
        return pick if pick is not None else next((c for c in chains if c.get("verdict")), None)

    def root_chain(self) -> tuple[str, ...]:
        """The wait chain behind the root cause in words (waiter first, one hop a line), or ()."""
        pick = self.root_chain_record()
        return tuple(pick.get("words") or ()) if pick else ()

    def to_dict(self) -> dict[str, Any]:
        """The incident as its JSON object, the first schema's fields in their order, additions last."""
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["action"] = self.action.value
        d["findings"] = [f.to_dict() for f in self.findings]
        # Field order as in the first schema, additions last.
        order = [
            "schema",
            "verdict",
            "detected_at",
            "last_progress",
            "attempt",
            "action",
            "processes",
            "findings",
            "window_seconds",
            "notes",
            "remedy",
            "gpu",
            "kernel",
        ]
        out = {k: _lists(d[k]) for k in order}
        if self.collectives:  # only where a flight recorder was read: other incidents keep their shape
            out["collectives"] = _lists(d["collectives"])
        if self.graph:  # only where something waits on something: other incidents keep their shape
            out["graph"] = self.graph
        return out

    def to_json(self, indent: int | None = 2) -> str:
        """``hangwatch.incident/1`` JSON."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Incident:
        """Read ``hangwatch.incident/1`` JSON (raises ValueError/KeyError on a malformed object)."""
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} object: schema is {d.get('schema')!r}")
        from hangwatch.records.gpu import KernelEvent, gpu_from_dict

        lp = d.get("last_progress")
        return cls(
            schema=d["schema"],
            verdict=Verdict(d["verdict"]),
            detected_at=float(d["detected_at"]),
            last_progress=LastProgress(**lp) if lp else None,
            attempt=int(d["attempt"]),
            action=Action(d["action"]),
            processes=tuple(_process(p) for p in d["processes"]),
            findings=tuple(Finding.from_dict(f) for f in d["findings"]),
            window_seconds=d.get("window_seconds"),
            notes=tuple(d.get("notes", ())),
            remedy=d.get("remedy"),
            gpu=gpu_from_dict(d["gpu"]) if d.get("gpu") else None,
            kernel=tuple(KernelEvent(**k) for k in d.get("kernel", ())),
            collectives=tuple(CollectiveRow(**c) for c in d.get("collectives", ())),
            graph=d.get("graph") if isinstance(d.get("graph"), dict) else None,
        )


def _lists(v: Any) -> Any:
    """asdict keeps tuples; JSON wants lists. Convert recursively."""
    if isinstance(v, tuple | list):
        return [_lists(x) for x in v]
    if isinstance(v, dict):
        return {k: _lists(x) for k, x in v.items()}
    return v


def _process(p: dict[str, Any]) -> ProcessRecord:
    threads = tuple(
        ThreadRecord(tid=t["tid"], name=t["name"], idle=t["idle"], frames=tuple(FrameRecord(**f) for f in t["frames"]))
        for t in p["threads"]
    )
    return ProcessRecord(
        pid=p["pid"],
        ppid=p["ppid"],
        role=p["role"],
        rank=p["rank"],
        state=p["state"],
        cpu_percent=p["cpu_percent"],
        cmdline=p["cmdline"],
        threads=threads,
        where=tuple(FrameRecord(**f) for f in p.get("where", ())),
        holds=p.get("holds"),
    )
