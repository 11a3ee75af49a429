"""The ranks' flight recorders read and compared (diagnose/collectives.py words what they show): per rank and
group, the collectives it started and completed and the one it waits in (``rank_collectives``), and across ranks
the first one some entered and others did not, or entered differently (``analyze``)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from hangwatch import signatures as sg
from hangwatch.diagnose.alignment import Skew, align
from hangwatch.diagnose.views import ProcessView, innermost_user
from hangwatch.records.evidence import CollectiveEntry, FlightRecord, Frame
from hangwatch.records.values import frozen

SHARED_OPS = 128  # a rank's newest collectives per group, shared with the other nodes for the pairing


DTYPE_BYTES = {
    "Float": 4,
    "float32": 4,
    "Half": 2,
    "float16": 2,
    "BFloat16": 2,
    "bfloat16": 2,
    "Double": 8,
    "float64": 8,
    "Long": 8,
    "int64": 8,
    "Int": 4,
    "int32": 4,
    "Byte": 1,
    "uint8": 1,
    "Char": 1,
    "Bool": 1,
    "Short": 2,
}


@frozen
class Pending:
    """The collective a rank waits in: the oldest one it entered that has not completed."""

    seq: int
    op: str
    nbytes: int | None
    at: float
    line: str | None  # ``train.py:88``: the user's line that called it, from the recorder's frames
    sizes: str  # ``[[4160]]``
    file: str | None = None  # that frame, in full
    lineno: int | None = None
    function: str | None = None
    code: str | None = None
    timeout_s: float | None = None  # when the waiters give up on it (the process group's timeout)


@frozen
class GroupView:
    """One process group as one rank's recorder sees it."""

    entered: int  # the newest sequence number it entered (0: none)
    done: int  # the newest it completed
    pending: Pending | None
    # (seq, op, sizes, site) of every recorded entry, ``site`` the user's line that called it (``/abs/x.py:88``,
    # "" when not recorded): the ranks' sequences are paired by it (alignment.py); the store gets the newest.
    ops: tuple[tuple[int, str, str, str], ...] = ()


NO_GROUP = GroupView(0, 0, None)  # a group a rank's recorder has no entry of


@frozen
class RankCollectives:
    """A rank's collectives, small enough to share between nodes."""

    rank: int
    answered: bool
    groups: dict[str, GroupView]
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON for the store (each group's newest SHARED_OPS entries)."""
        d = asdict(self)
        for v in d["groups"].values():
            v["ops"] = v["ops"][-SHARED_OPS:]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RankCollectives:
        """From the store's JSON."""
        groups = {}
        for g, v in (d.get("groups") or {}).items():
            p = v.get("pending")
            groups[str(g)] = GroupView(
                entered=int(v["entered"]),
                done=int(v["done"]),
                pending=Pending(**p) if p else None,
                ops=tuple((int(s), str(o), str(z), str(n)) for s, o, z, n in v.get("ops", ())),
            )
        return cls(rank=int(d["rank"]), answered=bool(d["answered"]), groups=groups, error=d.get("error"))


def nbytes(e: CollectiveEntry) -> int | None:
    """Bytes a collective moves per rank (its inputs), when the dtype is known."""
    if not e.input_sizes:
        return None
    per = DTYPE_BYTES.get(e.dtypes[0], 4) if e.dtypes else 4
    return sum(math.prod(shape) for shape in e.input_sizes) * per


def call_site(f: Frame | None) -> str:
    """``file:line`` of a frame, "" for none: the key that pairs the ranks' collectives by where they were called."""
    return f"{f.file}:{f.line}" if f is not None else ""


def _line(f: Frame | None) -> str | None:
    return f"{f.file.rsplit('/', 1)[-1]}:{f.line}" if f is not None else None


def waiting_frame(v: ProcessView | None, op: str) -> Frame | None:
    """Where rank ``v`` called the collective ``op`` it waits in, from its own stack: its main thread inside
    torch.distributed's ``op`` (a barrier, an all_reduce), its innermost user frame above that. What a recorder
    without frames (torch's C++ dump, answered while our handler waited for the GIL) leaves out."""
    t = v.main_thread if v is not None else None
    if t is None or not t.frames:
        return None
    for i, f in enumerate(t.frames):
        if f.file.endswith(sg.C10D_PY) and f.function == op:
            return innermost_user(t.frames[i + 1 :])
    return None


def rank_collectives(rank: int, record: FlightRecord, view: ProcessView | None = None) -> RankCollectives:
    """A rank's recorder reduced to what the analysis needs; ``view``: the rank's process, whose stack names
    the line of the collective it waits in when the recorder's entry has no frame."""
    if not record.answered:
        return RankCollectives(rank, False, {}, record.error)
    groups: dict[str, GroupView] = {}
    by_group: dict[str, list[CollectiveEntry]] = {}
    for e in record.entries:
        if e.seq > 0:
            by_group.setdefault(e.group, []).append(e)
    for g, es in by_group.items():
        es.sort(key=lambda e: e.seq)
        waiting = next((e for e in es if not e.done), None)
        f = (waiting.frame or waiting_frame(view, waiting.op)) if waiting is not None else None
        pend = (
            None
            if waiting is None
            else Pending(
                seq=waiting.seq,
                op=waiting.op,
                nbytes=nbytes(waiting),
                at=waiting.created_at,
                line=_line(f),
                sizes=str([list(s) for s in waiting.input_sizes]),
                file=f.file if f else None,
                lineno=f.line if f else None,
                function=f.function if f else None,
                code=f.code if f else None,
                timeout_s=waiting.timeout_ms / 1000 if waiting.timeout_ms else None,
            )
        )
        groups[g] = GroupView(
            entered=es[-1].seq,
            done=max((e.seq for e in es if e.done), default=0),
            pending=pend,
            ops=tuple(
                (e.seq, e.op, str([list(s) for s in e.input_sizes]), call_site(e.frame)) for e in es if not e.p2p_seq
            ),
        )
    return RankCollectives(rank, True, groups)


@frozen
class Stall:
    """What the recorders say, for one process group."""

    group: str
    seq: int  # the collective the waiting ranks wait in
    op: str
    waiting: list[int]  # ranks that entered it and wait
    missing: list[int]  # ranks that never entered it
    mismatch: dict[str, list[int]]  # at that seq, "op sizes" -> ranks, when they differ
    pending: Pending  # the waiters' entry (the first waiter's)
    at_seq: dict[int, Pending]  # each waiting rank's entry at that seq
    done_by_missing: dict[int, int]  # missing rank -> the newest it completed
    silent: list[int]  # ranks whose recorder did not answer
    skew: Skew | None = None  # where the ranks' calls first differ, paired by call site


def analyze(ranks: list[RankCollectives]) -> Stall | None:
    """The first process group where some rank waits in a collective: who waits, who never came, whether the
    ranks disagree at that sequence number. None when no rank waits in a recorded collective."""
    answered = [r for r in ranks if r.answered]
    silent = sorted(r.rank for r in ranks if not r.answered)
    groups = sorted({g for r in answered for g in r.groups})
    for g in groups:
        pending = {r.rank: p for r in answered if g in r.groups and (p := r.groups[g].pending) is not None}
        if not pending:
            continue
        seq = min(p.seq for p in pending.values())
        pend = {r: p for r, p in pending.items() if p.seq == seq}
        members = [r for r in answered if g in r.groups or g in ("0", "default_pg")]
        missing = sorted(r.rank for r in members if r.groups.get(g, NO_GROUP).entered < seq)
        kinds: dict[str, list[int]] = {}
        for r in members:
            view = r.groups.get(g)
            op = _op_at(view.ops, seq) if view is not None else None
            if op is not None:
                kinds.setdefault(op[0] if op[1] in ("[]", "") else f"{op[0]} {op[1]}", []).append(r.rank)
        first = pend[min(pend)]
        return Stall(
            group=g,
            seq=seq,
            op=first.op,
            waiting=sorted(pend),
            missing=missing,
            mismatch=kinds if len(kinds) > 1 else {},
            pending=first,
            at_seq=pend,
            done_by_missing={r.rank: r.groups.get(g, NO_GROUP).done for r in members if r.rank in missing},
            silent=silent,
            skew=align({r.rank: r.groups[g].ops for r in members if g in r.groups}, hang_seq=seq),
        )
    return None


def _op_at(ops: tuple[tuple[int, str, str, str], ...], seq: int) -> tuple[str, str] | None:
    """(op, sizes) of collective ``seq`` in a rank's recorded ops (found by index where the numbers run on)."""
    if ops:
        i = seq - ops[0][0]
        if 0 <= i < len(ops) and ops[i][0] == seq:
            return ops[i][1], ops[i][2]
    return next(((o, z) for s, o, z, _ in ops if s == seq), None)
