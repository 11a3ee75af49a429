"""Every rank's collectives, from torch's flight recorder: who never entered the collective the others wait in,
a mismatch at the same sequence number, or a collective every rank entered and none completed.

With NCCL, collectives are asynchronous: a hung rank's Python stack sits at ``loss.item()`` or ``optimizer.step()``
on every rank alike, far from the collective that never completed, so stacks cannot find the culprit. The
recorder can: per process group, each collective gets the same sequence number on every rank, and each rank
records which it entered and which completed (docs/facts.md#torchs-flight-recorder). This evidence outranks
stack-based guessing (it is read from torch itself), and agrees with it where both can tell.

Each rank is first reduced to a small ``RankCollectives`` (what it entered last, what completed last, what it
waits in), the same on one node or shared between nodes through the store; ``analyze`` reads those.
"""

from __future__ import annotations

import linecache
import time
from typing import Any

from hangwatch.capture.c10d import ROOT_ARG
from hangwatch.causes import Cause
from hangwatch.diagnose.alignment import Call
from hangwatch.diagnose.distributed import culprit_where, log_of, rank_progress_text
from hangwatch.diagnose.ends import RESTING, End, rank_end
from hangwatch.diagnose.raised import raised_by
from hangwatch.diagnose.recorders import Pending, Stall, analyze, call_site, rank_collectives
from hangwatch.diagnose.scene import Hit, Scene, named
from hangwatch.diagnose.views import ProcessView, innermost_explaining, innermost_user, size_text
from hangwatch.fixes import COLLECTIVE_STALLED_FIX, PEER_FIX, SLEEPER_FIX, STRAGGLER_FIX
from hangwatch.ranges import ranks_label
from hangwatch.records.evidence import Role
from hangwatch.records.incident import CollectiveRow, Finding, Where
from hangwatch.records.values import frozen

MISMATCH_FIX = (
    "Every rank must call the same collectives, in the same order, with the same sizes: look for a collective "
    "inside `if rank == 0:`, an uneven number of batches per rank, or a size that depends on the rank's data.",
    *PEER_FIX[2:],
)


def _when(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at)) if at else "?"


def _what(p: Pending) -> str:
    size = f"{size_text(p.nbytes)}, " if p.nbytes else ""
    return f"{p.op} #{p.seq} ({size}{p.line or 'no frame recorded'})"


def _ranks(scene: Scene) -> dict[int, ProcessView]:
    return {
        v.info.rank: v
        for v in scene.views
        if v.role in (Role.RANK, Role.MAIN, Role.CHILD) and v.info.rank is not None and v.ev.flight is not None
    }


def flight_rule(scene: Scene) -> list[Hit]:
    """distributed.*: from every local rank's flight recorder."""
    views = _ranks(scene)
    if len(views) < 2:
        return []
    ranks = [rank_collectives(r, v.ev.flight, v) for r, v in sorted(views.items()) if v.ev.flight is not None]
    stall = analyze(ranks)
    if stall is None:
        return []
    return [explain(stall, views, scene)]


def _recorded_where(p: Pending | None, v: ProcessView | None, rank: int) -> Where | None:
    """Where a rank called a collective, from its recorder's frame; else from its current stack."""
    if p is not None and p.file is not None:
        return Where(
            pid=v.pid if v is not None else 0,
            rank=rank,
            tid=None,
            file=p.file,
            line=p.lineno,
            function=p.function,
            code=p.code,
        )
    t = v.main_thread if v is not None else None
    return v.where(t, innermost_explaining(t.frames)) if v is not None and t is not None else None


@frozen
class Remote:
    """What another node said of one of its ranks (the rank summary shared through the store)."""

    where: Where | None
    text: str
    end: End
    node: int | None = None


def remote_info(summary: dict[str, Any], node: int | None = None) -> Remote:
    """A rank summary from the store, read for the flight recorder's finding."""
    w = summary.get("where")
    return Remote(
        where=Where(**w) if w else None, text=str(summary.get("text", "")), end=End.from_dict(summary), node=node
    )


def _missing_where(
    scene: Scene | None,
    views: dict[int, ProcessView],
    rank: int,
    remote: dict[int, Remote] | None = None,
    limit_s: float | None = None,
) -> tuple[Where | None, str, End | None]:
    """Where a rank that never entered the collective is, what it does, and its state (from its stacks, or
    from its node's summary); ``limit_s``: when the others give up on the collective."""

    v = views.get(rank)
    t = v.main_thread if v is not None else None
    if v is None or t is None or scene is None:
        r = (remote or {}).get(rank)
        if r is None:
            x = raised_by(log_of(scene), rank) if scene is not None else None
            if x is not None:  # it printed its traceback and is gone
                return x.where(0, rank), f"is gone: it {x.text()}", None
            return None, "is not on this node", None
        return r.where, f"is {r.text}" if r.text.startswith("in ") else r.text, r.end
    where, detail = culprit_where(scene, v, t)
    doing = (
        f"is at {detail.removeprefix('in ')}"
        if detail.startswith("in ")
        else f"is waiting for a batch: {detail}"
        if detail.startswith("its DataLoader worker")
        else f"is {detail}"
    )
    return where, doing, rank_end(scene, v, t, limit_s)


def explain(
    stall: Stall, views: dict[int, ProcessView], scene: Scene | None, remote: dict[int, Remote] | None = None
) -> Hit:
    """One finding from what the recorders say (``views``: the ranks captured on this node, for where the
    missing ranks are; ``remote``: what the other nodes said of theirs). Where the ranks' calls went different
    ways before the collective they wait in (or a majority shows who went another way there), that is the
    finding: the line where it went wrong, not the line where it shows."""
    hit = _explain_wait(stall, views, scene, remote)
    skew = stall.skew
    if skew is None or hit.finding.cause == Cause.DISTRIBUTED_STRAGGLER:
        return hit  # a rank that still works is not judged by what its recorder has not reached yet
    call = skew.culprit_call
    lead = skew.culprits[0]
    where = _site_where(lead, call, views) or hit.finding.where
    p = stall.pending
    who = ranks_label(stall.waiting) + (" wait" if len(stall.waiting) > 1 else " waits")
    if stall.mismatch:
        sides = []
        for kind, rs in sorted(stall.mismatch.items(), key=lambda kv: min(kv[1])):
            line = next((stall.at_seq[r].line for r in rs if r in stall.at_seq and stall.at_seq[r].line), None)
            verb = "wait" if len(rs) > 1 else "waits"
            sides.append(f"{ranks_label(rs)} {verb} in {kind.split()[0]}" + (f" ({line})" if line else ""))
        now = f"at collective #{stall.seq} " + " and ".join(sides)
    else:
        now = f"{who} in {_what(p)}" + (f" and {ranks_label(stall.missing)} never entered it" if stall.missing else "")
    how = (
        "paired by call site (the recorders' frames)"
        if skew.by_site
        else "paired by op and sizes (the recorders gave no call sites)"
    )
    agree = (
        f"the same calls from #{skew.since} to #{skew.seq - 1}, then"
        if skew.seq > skew.since
        else f"different from the first recorded, #{skew.seq}:"
    )
    ev = (
        f"the ranks' collectives {how}: {agree} {ranks_label(skew.culprits)}: {skew.theirs.text()}; "
        f"{ranks_label(skew.others)}: {skew.ours.text()}",
        *hit.finding.evidence,
    )
    finding = Finding(Cause.DISTRIBUTED_PEER_STUCK, 0.97, f"{skew.said()}. Now {now}.", where, ev, MISMATCH_FIX)
    return named(finding, hit.end)


def _site_where(rank: int, call: Call, views: dict[int, ProcessView]) -> Where | None:
    """The user's line of a call site, on ``rank`` (its function and text from the rank's own recorder)."""
    if not call.site:
        return None
    file, _, line = call.site.rpartition(":")
    v = views.get(rank)
    frame = None
    if v is not None and v.ev.flight is not None:
        frame = next(
            (e.frame for e in v.ev.flight.entries if e.frame is not None and call_site(e.frame) == call.site), None
        )
    return Where(
        pid=v.pid if v is not None else 0,
        rank=rank,
        tid=None,
        file=file,
        line=int(line) if line.isdigit() else None,
        function=frame.function if frame is not None else None,
        code=frame.code
        if frame is not None
        else (linecache.getline(file, int(line)).strip() or None)
        if line.isdigit()
        else None,
    )


def _explain_wait(
    stall: Stall, views: dict[int, ProcessView], scene: Scene | None, remote: dict[int, Remote] | None
) -> Hit:
    """The finding from the collective the ranks wait in: who never entered it, a mismatch there, or none
    completing it."""
    p = stall.pending
    who = ranks_label(stall.waiting).capitalize() + (" wait" if len(stall.waiting) > 1 else " waits")
    waits = (
        f"{who} in {_what(p)} since {_when(p.at)}"
        if not stall.mismatch
        else f"{who} at collective #{stall.seq} since {_when(p.at)}"
    )
    ev = [f"flight recorder, process group {stall.group}: " + waits]
    if stall.silent:
        ev.append(f"the recorder of {ranks_label(stall.silent)} did not answer")
    first_waiter = views.get(stall.waiting[0])
    if stall.mismatch:

        def side(kind: str, rs: list[int]) -> str:
            line = next((stall.at_seq[r].line for r in rs if r in stall.at_seq and stall.at_seq[r].line), None)
            return f"{ranks_label(rs)}: {kind}" + (f" at {line}" if line else "")

        parts = "; ".join(side(k, rs) for k, rs in sorted(stall.mismatch.items(), key=lambda kv: -len(kv[1])))
        ev.append(f"at #{stall.seq} the ranks called different collectives or sizes: {parts}")
        odd = min(stall.mismatch.values(), key=len)
        tie = sum(len(rs) == len(odd) for rs in stall.mismatch.values()) > 1
        if tie:  # as many ranks on each side: the side with rank 0 is named (rank-zero-only code is the usual cause)
            odd = min(stall.mismatch.values(), key=min)
        which = (
            f"{ranks_label(odd).capitalize()} took another path."
            if not tie
            else f"With as many ranks on each side the recorders cannot say which side is wrong; {ranks_label(odd)}'s "
            "line is shown (code only rank 0 runs is the usual cause)."
        )
        where = _recorded_where(stall.at_seq.get(odd[0]), views.get(odd[0]), odd[0])
        said = f"The ranks disagree at collective #{stall.seq} of process group {stall.group}: {parts}. {which}"
        return named(
            Finding(Cause.DISTRIBUTED_PEER_STUCK, 0.97, said, where, tuple(ev), MISMATCH_FIX),
            End(
                "diverged",
                f"at collective #{stall.seq} the ranks called different collectives or sizes ({parts}): "
                "none can complete",
            ),
        )
    if not stall.missing and (differ := _roots_differ(stall, views, ev)) is not None:
        return differ
    if not stall.missing:
        where = (
            first_waiter.where(first_waiter.main_thread, None) if first_waiter and first_waiter.main_thread else None
        )
        said = (
            f"Every rank entered {_what(p)} of process group {stall.group} and none completed it: "
            "the transport (network, NCCL, the devices) stalled, not the code."
            if not stall.silent
            else f"Every rank whose recorder answered entered {_what(p)} of process group {stall.group} and "
            f"none completed it; the recorder of {ranks_label(stall.silent)} did not answer, so whether "
            f"{'they' if len(stall.silent) > 1 else 'it'} entered it was not read."
        )
        return named(
            Finding(Cause.DISTRIBUTED_COLLECTIVE_STALLED, 0.9, said, where, tuple(ev), COLLECTIVE_STALLED_FIX),
            End("stalled"),
        )
    read = {r: _missing_where(scene, views, r, remote, p.timeout_s) for r in stall.missing}
    ends = {r: e if e is not None else End("missing") for r, (_, _, e) in read.items()}
    # the rank that holds the others up leads (the proven first, then one measured stuck), else one that works
    lead = min(stall.missing, key=lambda r: (not ends[r].holds_up, ends[r].first, ends[r].state != "working"))
    where, doing, _ = read[lead]
    end = ends[lead]
    details = [f"rank {r} last completed #{stall.done_by_missing.get(r, 0)} and {read[r][1]}" for r in stall.missing]
    ev.append("; ".join(details))
    for r in stall.missing:
        if ends[r].fact:
            ev.append(str(ends[r].fact))
    ev.append(f"{ranks_label(stall.missing)} never entered it")
    if scene is not None:
        progress = rank_progress_text(scene.evidence)
        if progress:
            ev.append(progress)
    alike = [r for r in stall.missing if ends[r].how() == end.how() and ends[r].holds_up == end.holds_up]
    who = ranks_label(alike).capitalize()  # only the ranks whose state reads as the lead's are said alike
    node = (remote or {}).get(lead)
    if len(alike) == 1 and node is not None and node.node is not None:
        who += f" on node {node.node}"
    verb = "are" if len(alike) > 1 else "is"
    waits_low = waits[0].lower() + waits[1:]
    last = f"#{stall.seq} yet (it last completed #{stall.done_by_missing.get(lead, 0)})"
    entered = f"it has not entered {p.op} {last}, and {waits_low}."
    never = f"never entered {p.op} {last.replace(' yet', '', 1)}, while {waits_low}."
    return _by_end(end, who, verb, doing, (entered, never), where, tuple(ev))


def _by_end(
    end: End, who: str, verb: str, doing: str, words: tuple[str, str], where: Where | None, ev: tuple[str, ...]
) -> Hit:
    """The missing ranks (``who``, ``verb``) named by what their lead was measured doing (``words``: that it has not
    entered the collective yet, that it never entered it, each with what the others do): working, a straggler; one
    that does not hold the others up (a timer wakes it, or it wakes again and again), a wait, not a rank that cannot
    come; else the culprit, stuck (or asleep past the others' timeout) where it is."""
    rest, (entered, never) = doing.removeprefix("is "), words
    if end.state == "working":
        said = f"{who} {verb} {end.at_work()}, {rest}: {end.fact}; {entered} A straggler: the job waits, bounded by "
        return named(Finding(Cause.DISTRIBUTED_STRAGGLER, 0.96, f"{said}--max-slow.", where, ev, STRAGGLER_FIX), end)
    if not end.holds_up:
        fact = f": {end.fact}" if end.fact else ""
        said = f"{who} {verb} {end.how()}, not stuck, {rest}{fact}; {entered} The job waits, bounded by --max-slow."
        return named(Finding(Cause.DISTRIBUTED_STRAGGLER, 0.9, said, where, ev, SLEEPER_FIX), end)
    how = f"{verb} stuck {rest}" if end.how() == "stuck" else doing.replace("is ", f"{verb} ", 1)
    if end.proves_hang and end.state in RESTING:
        how = f"{verb} asleep {rest} for longer than the others will wait"
    return named(Finding(Cause.DISTRIBUTED_PEER_STUCK, 0.97, f"{who} {how} and {never}", where, ev, PEER_FIX), end)


# --- the per-rank table an incident shows --------------------------------------------------------------------------
def collective_rows(scene: Scene) -> tuple[CollectiveRow, ...]:
    """Per process group, the ranks with the same last entered and last completed collective, in one row each
    (ranks merged into ranges, as at 256 ranks)."""
    views = _ranks(scene)
    rows: dict[tuple[str, str, str, str], list[int]] = {}
    for r, v in sorted(views.items()):
        record = v.ev.flight
        if record is None:
            continue
        rc = rank_collectives(r, record, v)
        if not rc.answered:
            rows.setdefault(("-", "did not answer", "", (record.error or "")[:80]), []).append(r)
            continue
        for g, view in sorted(rc.groups.items()):
            last = next((f"{o} #{s} {z}" for s, o, z, _ in reversed(view.ops) if s == view.entered), f"#{view.entered}")
            state = f"waits in {_what(view.pending)}" if view.pending is not None else "idle"
            rows.setdefault((g, last, f"#{view.done}", state), []).append(r)
    return tuple(
        CollectiveRow(ranks=ranks_label(rs), group=g, last_entered=last, last_completed=done, state=state)
        for (g, last, done, state), rs in sorted(rows.items(), key=lambda kv: min(kv[1]))
    )


def _roots_differ(stall: Stall, views: dict[int, ProcessView], ev: list[str]) -> Hit | None:
    """Every rank entered the same rooted collective (a broadcast, a reduce, a scatter, a gather), and their calls
    name different roots (each call's own ``src``/``dst``, read from its arguments): no transport stalled, the code
    gave each rank another root (a node's local rank 0 taken for the global one), and none can complete. Only where
    the recorders say every rank entered collective #seq and none completed it (so each is in that one call, not the
    next of the same kind), each waiter's call was read as that op on the default group, and two roots or more."""
    waiting = [views[r] for r in stall.waiting if r in views]
    calls = [c for v in waiting if (c := v.ev.c10d) is not None]
    if len(calls) != len(waiting) or len(calls) < 2 or any(c.world is not True for c in calls):
        return None  # each waiter's call read, on the default group (a subgroup's root differs by design)
    op = calls[0].op
    if op not in ROOT_ARG or any(c.op != op for c in calls) or op not in stall.pending.op:
        return None  # the recorder's collective #seq is the call read
    roots = {
        r: c.peer for r in stall.waiting if r in views and (c := views[r].ev.c10d) is not None and c.peer is not None
    }
    if len(set(roots.values())) < 2:
        return None
    odd = min(set(roots.values()), key=lambda root: (sum(1 for x in roots.values() if x == root), root))
    v = views[next(r for r, root in roots.items() if root == odd)]
    parts = ", ".join(f"rank {r} from root {root}" for r, root in roots.items())
    said = (
        f"The ranks are in {stall.pending.op} #{stall.seq} of process group {stall.group} with different "
        f"roots ({parts}): each waits for a root the others do not name, and none can complete."
    )
    facts = (*ev, f"the roots the calls name, read from their arguments: {parts}")
    return named(
        Finding(
            Cause.DISTRIBUTED_PEER_STUCK,
            0.97,
            said,
            v.where(v.main_thread, innermost_user(v.main_thread.frames)) if v.main_thread else None,
            facts,
            MISMATCH_FIX,
        ),
        End("diverged", f"at collective #{stall.seq} the ranks name different roots ({parts}): none can complete"),
    )
