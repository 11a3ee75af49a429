"""The job across nodes: each node's hangwatch summarises its own ranks (``rank_summaries``), the summaries travel
through the coordination store, and every node merges all of them the same way (``merge_nodes``): the flight
recorders first (who never entered the collective the others wait in), else the ranks' stacks."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict
from typing import Any

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose.collectives import explain, remote_info
from hangwatch.diagnose.distributed import RankGroups, _classify, _ranks, culprit_where
from hangwatch.diagnose.ends import End, collective_limit, rank_end
from hangwatch.diagnose.recorders import RankCollectives, analyze, rank_collectives
from hangwatch.diagnose.scene import Hit, Scene, named
from hangwatch.diagnose.views import ProcessView, describe, innermost_user
from hangwatch.fixes import PEER_FIX, STRAGGLER_FIX
from hangwatch.ranges import ranks_label
from hangwatch.records.evidence import Evidence
from hangwatch.records.incident import Finding, Where
from hangwatch.records.run import NodeSummary

# A rank's state in the words of an older version's node (its ``activity``): a sleep of any kind was "asleep", a state
# its rules did not read "unknown"
OLD_ACTIVITY = {"looping": "asleep", "long_sleep": "asleep"} | {
    s: s for s in ("gone", "stopped", "spinning", "working", "asleep", "wakes", "idle", "blocked")
}


def rank_summaries(ev: Evidence) -> list[dict[str, Any]]:
    """What each rank on this node is doing, small enough to share: group, operation, where."""
    scene = Scene.of(ev)
    g = _classify(_ranks(scene))
    out = [_summary(scene, g, r, v) for r, v in sorted(g.by_rank.items()) if v.main_thread is not None]
    flown = {int(d["rank"]) for d in out}
    for pv in scene.views:  # a rank whose stack could not be read still brings its recorder
        pr = pv.info.rank
        if pr is not None and pr not in flown and pv.ev.flight is not None:
            no_stack = {"activity": "unknown", **End("unknown").to_dict()}
            out.append(_row(pr, pv, "elsewhere", None, "(no stack read)", pv.where(None, None), **no_stack))
    return out


def _row(r: int, v: ProcessView, group: str, op: str | None, text: str, where: Where, **more: Any) -> dict[str, Any]:
    """One rank's summary as it travels: who, its group and operation, where, what else is said, its recorder."""
    said = {"rank": r, "pid": v.pid, "group": group, "op": op, "text": text, "where": asdict(where)}
    fr = {"fr": rank_collectives(r, v.ev.flight, v).to_dict()} if v.ev.flight is not None else {}  # (its recorder)
    return {**said, **more, **fr}


def _summary(scene: Scene, g: RankGroups, r: int, v: ProcessView) -> dict[str, Any]:
    """One rank's summary: in a collective or the rendezvous (the op and the user's line), or elsewhere (where, and
    what its state measured)."""
    t = v.main_thread
    assert t is not None  # noqa: S101 - only ranks with a main thread are summarised
    if r in g.in_coll or r in g.in_rdzv:
        group, frame = ("collective", g.in_coll[r]) if r in g.in_coll else ("rendezvous", g.in_rdzv[r])
        op, user = sg.method(frame), innermost_user(t.frames)
        text = f"in {op} at {describe(user)}" if group == "collective" else f"in rendezvous ({op}) at {describe(user)}"
        return _row(r, v, group, op, text, v.where(t, user))
    where, text = culprit_where(scene, v, t)
    end = rank_end(scene, v, t, collective_limit(scene))
    # for a node of an older version: its words, and the proof as it reads one
    old = {"activity": OLD_ACTIVITY.get(end.state, "unknown"), "proof": end.old_proof()}
    return _row(r, v, "elsewhere", None, text, where, **old, **end.to_dict())


def _grouped_evidence(summaries: dict[int, NodeSummary], ranks: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """One line per place the ranks are, biggest group first: 256 ranks on 32 nodes read as a few lines
    (``ranks 0,2-255 on nodes 0-31: in all_reduce at train.py:88``)."""
    groups: dict[str, list[tuple[int, int]]] = {}
    for n, r in ranks:
        groups.setdefault(str(r["text"]), []).append((n, int(r["rank"])))
    out = []
    for text, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), min(kv[1]))):
        nodes = sorted({n for n, _ in members})
        on = f"node {nodes[0]} ({summaries[nodes[0]].host})" if len(nodes) == 1 else ranks_label(nodes, "node")
        out.append(f"{ranks_label(r for _, r in members)} on {on}: {text}")
    return out


def merge_nodes(summaries: dict[int, NodeSummary], nnodes: int) -> Hit | None:
    """One finding for the whole job from every node's summary, named, or None when nothing points anywhere: the
    ranks elsewhere, with what their nodes measured them doing (``ends.End``), which the verdict stage judges
    (``verdict.by_end``): one that holds the others up (stuck, idle, not read, or proven) makes the job hung, one
    that works is a straggler (waiting), one asleep, waking or gone may still come or end the wait."""
    ranks = [(node, r) for node, s in sorted(summaries.items()) for r in s.ranks]
    flight = _flight_merge(ranks)
    if flight is not None:
        return flight
    waiting = [(n, r) for n, r in ranks if r["group"] == "collective"]
    culprits = [(n, r) for n, r in ranks if r["group"] == "elsewhere"]
    silent = [n for n in range(nnodes) if n not in summaries]
    ev = _grouped_evidence(summaries, ranks)
    if silent:
        ev.append(f"node(s) {silent} did not report (no hangwatch there, or it is unreachable)")
    if waiting and culprits:
        return _culprits_hit(waiting, culprits, ev)
    if waiting and silent:
        said = (
            f"Every reporting rank waits in a collective; node(s) {silent} did not report: the culprit "
            "is there (crashed, stuck, or its hangwatch is not running)."
        )
        return named(
            Finding(Cause.DISTRIBUTED_PEER_STUCK, 0.8, said, None, tuple(ev), PEER_FIX),
            End("missing", f"node(s) {silent} did not report"),
        )
    return None


def _culprits_hit(
    waiting: list[tuple[int, dict[str, Any]]], culprits: list[tuple[int, dict[str, Any]]], ev: list[str]
) -> Hit:
    """Ranks wait in a collective while others are elsewhere: the ones that hold them up named (what their nodes
    measured them doing: ``ends.End``), else a straggler (one that works, or may still come)."""
    for n, r in culprits:
        if r.get("fact"):
            ev.append(f"rank {r['rank']} on node {n}: {r['fact']}")
    ends = [(n, r, End.from_dict(r)) for n, r in culprits]
    stuck = sorted(((n, r, e) for n, r, e in ends if e.holds_up), key=lambda x: x[2].first)
    victims = f"{len(waiting)} rank(s) on node(s) {sorted({n for n, _ in waiting})} wait in a collective"
    fix: tuple[str, ...]
    if stuck:  # the ones that hold them up; else a straggler (waiting where one works, else one that may still come)
        first, end = stuck[0][1], stuck[0][2]
        who = [(n, r) for n, r, e in stuck if e.how() == end.how() and e.proves_hang == end.proves_hang]
        how, tail = end.how(), "."
        cause, sure, fix = Cause.DISTRIBUTED_PEER_STUCK, 0.95, PEER_FIX
    else:
        working = [x for x in ends if x[2].state == "working"]
        _, first, end = (working or ends)[0]
        who = [(n, r) for n, r, _ in (working or ends)]
        how = f"{end.at_work()}," if working else f"{end.how()}, not stuck,"
        tail = ". A straggler: the job waits, bounded by --max-slow."
        cause, sure, fix = Cause.DISTRIBUTED_STRAGGLER, 0.93, STRAGGLER_FIX
    names = ", ".join(f"rank {r['rank']} on node {n}" for n, r in who).capitalize()
    said = f"{names} {'is' if len(who) == 1 else 'are'} {how} {first['text']} while {victims}{tail}"
    return named(Finding(cause, sure, said, Where(**first["where"]), tuple(ev), fix), end)


def _flight_merge(ranks: list[tuple[int, dict[str, Any]]]) -> Hit | None:
    """Every node's flight recorders, as one: who never entered the collective the others wait in."""
    frs = [RankCollectives.from_dict(r["fr"]) for _, r in ranks if r.get("fr")]
    if len(frs) < 2:
        return None
    stall = analyze(frs)
    if stall is None:
        return None
    hit = explain(stall, {}, None, remote={int(r["rank"]): remote_info(r, n) for n, r in ranks})
    nodes = {int(r["rank"]): n for n, r in ranks}
    where = ", ".join(f"rank {m} on node {nodes[m]}" for m in stall.missing if m in nodes)
    ev = (*hit.finding.evidence, f"across nodes: {where}") if where else hit.finding.evidence
    return dataclasses.replace(hit, finding=dataclasses.replace(hit.finding, evidence=ev))
