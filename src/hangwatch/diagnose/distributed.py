"""Distributed causes: a rank that stopped while its peers wait, ranks waiting for peers to join.

Ranks waiting in a collective are the victims; the ranks elsewhere are the culprits
(hang-causes.md C12, verified with gloo). Ranks all in rendezvous wait for peers that never came (C13).
"""

from __future__ import annotations

from collections import defaultdict

from hangwatch.diagnose import signatures as sig
from hangwatch.diagnose.context import Context, Hit
from hangwatch.diagnose.dataloader import worker_state
from hangwatch.diagnose.views import ProcessView, ThreadView, describe, innermost_explaining, innermost_user
from hangwatch.evidence import Frame, Role
from hangwatch.incident import Finding, Verdict, Where

PEER_FIX = (
    "Fix what the culprit rank is doing at the location shown; the other ranks only wait for it.",
    "Every rank must call every collective in the same order: no barrier, checkpoint save or "
    "sync_dist log inside `if rank == 0:`.",
    "Uneven data per rank: DistributedSampler(drop_last=True) or the DDP join() context.",
    "Fail fast next time: init_process_group(timeout=timedelta(minutes=5)), TORCH_NCCL_DUMP_ON_TIMEOUT=1.",
)
RENDEZVOUS_FIX = (
    "Check that every rank was started: WORLD_SIZE ranks across all nodes (torchrun --nnodes/--nproc-per-node).",
    "Check MASTER_ADDR/MASTER_PORT (or --rdzv-endpoint) are the same everywhere and reachable from every node.",
    "A rank that crashed at startup never joins: read its log first.",
)


def _collective(t: ThreadView) -> Frame | None:
    return next((f for f in t.frames if sig.at(f, sig.C10D_PY, sig.COLLECTIVES)), None)


def _rendezvous(t: ThreadView) -> Frame | None:
    return next((f for f in t.frames if any(m in f.file for m in sig.RENDEZVOUS_FILES)
                 and sig.method(f) in sig.RENDEZVOUS_METHODS), None)


def _ranks(ctx: Context) -> list[ProcessView]:
    ranks = [v for v in ctx.views if v.role == Role.RANK and v.info.rank is not None]
    if not ranks:
        ranks = [v for v in ctx.views if v.role == Role.MAIN and v.info.rank is not None]
    return sorted(ranks, key=lambda v: v.info.rank or 0)


def _culprit_where(ctx: Context, v: ProcessView, t: ThreadView) -> tuple[Where, str]:
    """Where a culprit rank really is: its own user frame, or its stuck DataLoader worker's."""
    if any(sig.at(f, sig.DATALOADER_PY, sig.LOADER_WAIT_METHODS) for f in t.frames):
        for w in ctx.workers_of(v.pid):
            wt = w.main_thread
            if wt is not None and worker_state(wt) == "busy":
                frame = innermost_explaining(wt.frames)
                where = w.where(wt, frame)
                where = Where(**{**where.__dict__, "rank": v.info.rank})
                return where, f"its DataLoader worker pid {w.pid} is in {describe(frame)}"
    frame = innermost_explaining(t.frames)
    return v.where(t, frame), f"in {describe(frame)}"


def _groups_text(groups: dict[str, list[int]]) -> str:
    return "; ".join(f"rank{'s' if len(r) > 1 else ''} {','.join(map(str, r))} {what}" for what, r in groups.items())


def distributed_rule(ctx: Context) -> list[Hit]:
    ranks = _ranks(ctx)
    hits: list[Hit] = []
    in_coll: dict[int, Frame] = {}
    in_rdzv: dict[int, Frame] = {}
    elsewhere: dict[int, ThreadView] = {}
    groups: dict[str, list[int]] = defaultdict(list)
    for v in ranks:
        t = v.main_thread
        if t is None or not t.has_stack:
            continue
        r = v.info.rank
        assert r is not None
        coll, rdzv = _collective(t), _rendezvous(t)
        user = innermost_user(t.frames)
        at_user = f" at {user.file.rsplit('/', 1)[-1]}:{user.line}" if user else ""
        if coll is not None:
            in_coll[r] = coll
            groups[f"in {sig.method(coll)}{at_user}"].append(r)
        elif rdzv is not None:
            in_rdzv[r] = rdzv
            groups[f"in rendezvous ({sig.method(rdzv)}){at_user}"].append(r)
        else:
            elsewhere[r] = t
            groups[f"in {describe(innermost_explaining(t.frames))}"].append(r)
    by_rank = {v.info.rank: v for v in ranks}
    world = next((v.info.world_size for v in ranks if v.info.world_size), None)
    if in_coll and elsewhere:
        culprits = sorted(elsewhere)
        first = by_rank[culprits[0]]
        where, detail = _culprit_where(ctx, first, elsewhere[culprits[0]])
        ev = [_groups_text(groups), f"rank {culprits[0]} (pid {first.pid}) {detail}"]
        missing = _missing_ranks(world, by_rank)
        if missing:
            ev.append(f"ranks not found on this node: {missing}")
        hits.append(Hit(Finding(
            cause="distributed.peer_stuck", confidence=0.92,
            summary=(f"Rank{'s' if len(culprits) > 1 else ''} {','.join(map(str, culprits))} "
                     f"{'are' if len(culprits) > 1 else 'is'} stuck {detail} while "
                     f"rank{'s' if len(in_coll) > 1 else ''} {','.join(map(str, sorted(in_coll)))} wait in a collective."),
            where=where, evidence=tuple(ev), fix=PEER_FIX), Verdict.HUNG))
    elif len(in_coll) >= 2 and len({sig.method(f) for f in in_coll.values()}) > 1:
        ops: dict[str, list[int]] = defaultdict(list)
        for r, f in in_coll.items():
            ops[sig.method(f)].append(r)
        minority = min(ops.values(), key=len)
        if len(minority) < max(len(x) for x in ops.values()):
            v = by_rank[minority[0]]
            t = v.main_thread
            assert t is not None
            frame = innermost_user(t.frames)
            hits.append(Hit(Finding(
                cause="distributed.peer_stuck", confidence=0.85,
                summary=(f"Ranks are in different collectives: rank{'s' if len(minority) > 1 else ''} "
                         f"{','.join(map(str, minority))} called {sig.method(in_coll[minority[0]])} at "
                         f"{describe(frame)} while the others wait elsewhere: the ranks' code diverged."),
                where=v.where(t, frame), evidence=(_groups_text(groups),), fix=PEER_FIX[1:] + PEER_FIX[:1]),
                Verdict.HUNG))
    if in_rdzv and not in_coll:
        r0 = sorted(in_rdzv)[0]
        v = by_rank[r0]
        t = v.main_thread
        assert t is not None
        frame = innermost_user(t.frames)
        present = sorted(r for r in by_rank if r is not None)
        ev = [_groups_text(groups), f"WORLD_SIZE={world}; rank processes here: {present}"]
        hits.append(Hit(Finding(
            cause="distributed.rendezvous_wait", confidence=0.85,
            summary=(f"Rank{'s' if len(in_rdzv) > 1 else ''} {','.join(map(str, sorted(in_rdzv)))} wait at "
                     f"process-group setup ({describe(frame)}) for peers that have not joined"
                     + (f" ({len(present)} of {world} present here)." if world else ".")),
            where=v.where(t, frame), evidence=tuple(ev), fix=RENDEZVOUS_FIX), Verdict.HUNG))
    hits.extend(_launcher_rendezvous(ctx, ranks))
    return hits


def _missing_ranks(world: int | None, by_rank: dict[int | None, ProcessView]) -> list[int]:
    if not world:
        return []
    return [r for r in range(world) if r not in by_rank]


def _launcher_rendezvous(ctx: Context, ranks: list[ProcessView]) -> list[Hit]:
    """torchrun itself waiting in elastic rendezvous (another node never came), before any rank exists."""
    if ranks:
        return []
    hits = []
    for v in ctx.views:
        t = v.main_thread
        if v.role != Role.LAUNCHER or t is None or not t.has_stack:
            continue
        f = _rendezvous(t)
        if f is None:
            continue
        hits.append(Hit(Finding(
            cause="distributed.rendezvous_wait", confidence=0.8,
            summary=(f"The launcher (pid {v.pid}) waits in rendezvous ({describe(f)}) for other nodes; no rank has "
                     "started on this node."),
            where=v.where(t, f), evidence=(f"{v.label()} in {describe(f)}", "no rank processes exist yet"),
            fix=RENDEZVOUS_FIX), Verdict.HUNG))
    return hits
