"""Distributed causes: a rank that stopped while its peers wait, ranks waiting for peers to join.

Ranks waiting in a collective are the victims; the ranks elsewhere are the culprits
(docs/facts.md#distributed-victims-and-culprits). Ranks all in rendezvous wait for peers that never came.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import field

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose.ends import RESTING, STUCK, End, collective_limit, rank_end
from hangwatch.diagnose.process import at_debugger, reads_from_person
from hangwatch.diagnose.raised import job_log, raised_by
from hangwatch.diagnose.scene import Hit, Scene, named, named_at
from hangwatch.diagnose.views import (
    ProcessView,
    ThreadView,
    describe,
    innermost_explaining,
    innermost_user,
)
from hangwatch.diagnose.workers import busy_frames, busy_worker
from hangwatch.fixes import PEER_FIX, RENDEZVOUS_FIX, SLEEPER_FIX, STRAGGLER_FIX
from hangwatch.records.evidence import Evidence, Frame, Role
from hangwatch.records.incident import Finding, Where
from hangwatch.records.values import mutable


def _collective(t: ThreadView) -> Frame | None:
    return next((f for f in t.frames if sg.at(f, sg.C10D_PY, sg.COLLECTIVES)), None)


def _rendezvous(t: ThreadView) -> Frame | None:
    return next((f for f in t.frames if sg.is_rendezvous_frame(f)), None)


def _ranks(scene: Scene) -> list[ProcessView]:
    ranks = [v for v in scene.views if v.role == Role.RANK and v.info.rank is not None]
    if not ranks:
        ranks = [v for v in scene.views if v.role == Role.MAIN and v.info.rank is not None]
    return sorted(ranks, key=lambda v: v.info.rank or 0)


def culprit_where(scene: Scene, v: ProcessView, t: ThreadView) -> tuple[Where, str]:
    """Where a culprit rank really is: its own user frame, or its stuck DataLoader worker's."""
    if (busy := busy_worker(scene, v, t)) is not None:
        w, wt = busy
        frame = innermost_explaining(busy_frames(wt))
        where = Where(**{**w.where(wt, frame).__dict__, "rank": v.info.rank})
        return where, f"its DataLoader worker pid {w.pid} is in {describe(frame)}"
    if any(sg.at(f, "threading.py", sg.EXIT_JOIN) for f in t.frames):  # exiting: it waits for a thread
        others = [u for u in v.user_threads if u.user_frame is not None]
        if others:
            u = others[0]
            raised = raised_by(log_of(scene), v.info.rank) if v.info.rank is not None else None
            after = f" after it {raised.text()}" if raised is not None else ""
            return v.where(u, u.user_frame), (
                f"exiting{after}, and waits for its non-daemon thread '{u.name}' in {describe(u.user_frame)}"
            )
    frame = innermost_explaining(t.frames)
    if reads_from_person(v, t):  # its own reason, in the finding the others' wait leads to
        user = innermost_user(t.frames) or frame
        return v.where(t, user), (
            f"at a debugger prompt just before {describe(user)}, waiting for someone to type a command"
            if at_debugger(t)
            else f"waiting for someone to type at {describe(user)}"
        )
    return v.where(t, frame), f"in {describe(frame)}"


def log_of(scene: Scene) -> str:
    """The job's output the capture holds."""
    return job_log([p.output_tail for p in scene.evidence.processes])


def _groups_text(groups: dict[str, list[int]]) -> str:
    return "; ".join(f"{_plural(r)} {what}" for what, r in groups.items())


@mutable
class RankGroups:
    """Each rank's main thread, sorted into: in a collective, in rendezvous, elsewhere."""

    by_rank: dict[int, ProcessView] = field(default_factory=dict)
    in_coll: dict[int, Frame] = field(default_factory=dict)
    in_rdzv: dict[int, Frame] = field(default_factory=dict)
    elsewhere: dict[int, ThreadView] = field(default_factory=dict)
    groups: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    world: int | None = None

    def thread(self, rank: int) -> ThreadView | None:
        """The main thread of ``rank``."""
        return self.by_rank[rank].main_thread


def _classify(ranks: list[ProcessView]) -> RankGroups:
    g = RankGroups()
    for v in ranks:
        t, r = v.main_thread, v.info.rank
        if t is None or not t.has_stack or r is None:
            continue
        g.by_rank[r] = v
        coll, rdzv = _collective(t), _rendezvous(t)
        user = innermost_user(t.frames)
        at_user = f" at {user.file.rsplit('/', 1)[-1]}:{user.line}" if user else ""
        if coll is not None:
            g.in_coll[r] = coll
            g.groups[f"in {sg.method(coll)}{at_user}"].append(r)
        elif rdzv is not None:
            g.in_rdzv[r] = rdzv
            g.groups[f"in rendezvous ({sg.method(rdzv)}){at_user}"].append(r)
        else:
            g.elsewhere[r] = t
            g.groups[f"in {describe(innermost_explaining(t.frames))}"].append(r)
    g.world = next((v.info.world_size for v in ranks if v.info.world_size), None)
    return g


def _plural(items: Iterable[int], word: str = "rank") -> str:
    keys = sorted(items)
    return f"{word}{'s' if len(keys) > 1 else ''} {','.join(map(str, keys))}"


def rank_progress_text(ev: Evidence) -> str | None:
    """ "last progress: rank 0 step 41 (3 s before capture), rank 1 step 38 (14 s before)"."""
    if not ev.rank_progress:
        return None
    parts = [
        f"rank {r}" + (f" step {step}" if step is not None else "") + f" ({ev.started_at - at:.0f} s before)"
        for r, at, step in sorted(ev.rank_progress, key=lambda x: x[1])
    ]
    return "last progress by rank, oldest first: " + ", ".join(parts)


def _peer_stuck(scene: Scene, g: RankGroups) -> Hit:
    """Ranks wait in a collective while others are elsewhere: the lead of those others (a stuck one first) named,
    with what it was measured doing (``ends.rank_end``): stuck, working (a straggler), asleep or waking."""
    culprits = sorted(g.elsewhere)
    limit = collective_limit(scene)
    ends = {r: rank_end(scene, g.by_rank[r], g.elsewhere[r], limit) for r in culprits}
    stuck = sorted((r for r in culprits if ends[r].holds_up), key=lambda r: ends[r].first)
    lead = stuck[0] if stuck else culprits[0]
    first = g.by_rank[lead]
    where, detail = culprit_where(scene, first, g.elsewhere[lead])
    ev = [_groups_text(g.groups), f"rank {lead} (pid {first.pid}) {detail}"]
    for r in culprits:
        if ends[r].fact:
            ev.append(f"rank {r}: {ends[r].fact}")
    progress = rank_progress_text(scene.evidence)
    if progress:
        ev.append(progress)
    missing = _missing_ranks(g.world, g.by_rank)
    if missing:
        ev.append(f"ranks not found on this node: {missing}")
    ops = sorted({sg.method(f) for f in g.in_coll.values()})
    victims = f"{_plural(g.in_coll)} wait{'' if len(g.in_coll) > 1 else 's'} in {'/'.join(ops)}"
    if not stuck:
        working = [r for r in culprits if ends[r].state == "working"]
        e0 = ends[working[0]] if working else ends[lead]
        if working:
            summary = (
                f"{_plural(working).capitalize()} {'are' if len(working) > 1 else 'is'} {e0.at_work()}, "
                f"{detail}: {e0.fact}; {victims} for {'them' if len(working) > 1 else 'it'}. A straggler: "
                "the job waits, bounded by --max-slow."
            )
        else:
            how = (
                (f"asleep ({e0.fact})" if e0.fact else "asleep (a timer will wake it)")
                if e0.state in ("asleep", "long_sleep")
                else "alive: it wakes again and again (a sleep, poll or retry loop)"
                if e0.state == "wakes"
                else f"{e0.how()}, not in the collective"
            )
            verb = "are" if len(culprits) > 1 else "is"
            summary = f"{_plural(culprits).capitalize()} {verb} {how}, {detail}; {victims}."
        fix = SLEEPER_FIX if not working and e0.state in RESTING else STRAGGLER_FIX
        return named(Finding(Cause.DISTRIBUTED_STRAGGLER, 0.9, summary, where, tuple(ev), fix), e0)
    e = ends[lead]
    alike = [r for r in stuck if ends[r].how() == e.how() and ends[r].proves_hang == e.proves_hang]  # said alike
    verb = "are" if len(alike) > 1 else "is"
    how = f"{verb} stuck {detail}"
    if e.state not in STUCK:  # not measured stuck: say what it is
        how = (
            f"{verb} {'asleep ' if e.state in RESTING else ''}{detail} and will not arrive in time ({e.fact})"
            if e.proves_hang
            else f"{verb} {e.how()} {detail}" + (f" ({e.fact})" if e.fact else "")
        )
    summary = f"{_plural(alike).capitalize()} {how} while {victims}."
    return named(Finding(Cause.DISTRIBUTED_PEER_STUCK, 0.92, summary, where, tuple(ev), PEER_FIX), e)


def _peer_missing(scene: Scene, g: RankGroups) -> Hit:
    """Every rank here waits in a collective; the ranks it waits for are not here: they exited
    (crashed) or run on another node. A zombie child of the launcher tells which; the traceback a missing
    rank printed tells why, and where."""
    missing = _missing_ranks(g.world, g.by_rank)
    # an exited rank is a zombie beside the running ranks (their launcher's child); one of a rank's own children
    # (a DataLoader worker, a helper) that exited says nothing of the missing ranks
    launchers = {v.info.ppid for v in g.by_rank.values()}
    zombies = [v for v in scene.views if v.state == "Z" and v.info.ppid in launchers and v.pid not in launchers]
    victim = g.by_rank[min(g.in_coll)]
    ev = [_groups_text(g.groups), f"WORLD_SIZE={g.world}; ranks not running on this node: {missing}"]
    if zombies:
        ev.append(
            "exited processes beside the ranks (zombies of their launcher): "
            + ", ".join(f"pid {z.pid}" for z in zombies[:4])
        )
    pid = zombies[0].pid if zombies else victim.pid
    raised = next(((r, x) for r in missing if (x := raised_by(log_of(scene), r)) is not None), None)
    where = Where(pid=pid, rank=missing[0], tid=None, file=None, line=None, function=None)
    why = (
        "exited (crashed?) and will never arrive."
        if zombies
        else "did not arrive: they crashed, or run on another node and are stuck there."
    )
    if raised is not None:
        rank, x = raised
        where = x.where(pid, rank) or where
        why = f"{'is' if len(missing) == 1 else 'are'} gone: rank {rank} {x.text()} and never arrives."
        ev.append(f"the job's log: rank {rank} {x.text()}")
    said = (
        f"{_plural(g.in_coll).capitalize()} wait{'s' if len(g.in_coll) == 1 else ''} in a collective for "
        f"{_plural(missing)}, which {why}"
    )
    return named(
        Finding(
            Cause.DISTRIBUTED_PEER_STUCK,
            0.7 if raised is None else 0.9,
            said,
            where,
            tuple(ev),
            (
                "Look at the missing rank's own log and node: it crashed or is stuck there.",
                "Run one hangwatch per node (`hangwatch run -- torchrun --nnodes N ...` on each) so the stuck node "
                "is named.",
                *PEER_FIX[3:],
            ),
        ),
        End("missing"),
    )


UNRECORDED = (
    "the call where the ranks went different ways may be an earlier one (a collective one rank skipped or added): "
    "without torch's flight recorder, read under `hangwatch run`, their past calls cannot be paired, so this is "
    "where they wait, not where they diverged"
)


POINT_TO_POINT = frozenset({"send", "recv", "isend", "irecv"})  # ranks in different ones of these is their design


def _diverged(g: RankGroups, recorded: bool = True) -> Hit | None:
    ops: dict[str, list[int]] = defaultdict(list)
    for r, f in g.in_coll.items():
        ops[sg.method(f)].append(r)
    if len(ops) < 2 or set(ops) <= POINT_TO_POINT:  # (a send on one rank, a receive on another: the graph pairs them)
        return None
    minority = min(ops.values(), key=len)
    tie = len(minority) == max(len(x) for x in ops.values())
    if tie:  # no minority to blame (2 ranks, one in each): every side is named, the lowest rank's first
        minority = min(ops.values(), key=min)
    t = g.thread(minority[0])
    if t is None:
        return None
    v = g.by_rank[minority[0]]
    frame = innermost_user(t.frames)
    if tie:

        def at(r: list[int]) -> str:
            th = g.thread(r[0])
            return describe(innermost_user(th.frames) if th is not None else None)

        ordered = sorted(ops.items(), key=lambda kv: min(kv[1]))
        sides = "; ".join(f"{_plural(r)} in {op} at {at(r)}" for op, r in ordered)
        summary = f"Ranks are in different collectives ({sides}): the ranks' code diverged."
    else:
        summary = (
            f"Ranks are in different collectives: {_plural(minority)} called "
            f"{sg.method(g.in_coll[minority[0]])} at {describe(frame)} while the others wait elsewhere: "
            "the ranks' code diverged."
        )
    # named only: the graph proves it where each rank's call was read on the default group and nothing moves (each
    # waits for the ranks not in its own call: a cycle); ranks in groups of their own may be in different calls
    # and all complete
    facts = (_groups_text(g.groups),) + (() if recorded else (UNRECORDED,))
    return named_at(
        v, t, frame, Cause.DISTRIBUTED_PEER_STUCK, 0.8 if tie else 0.85, summary, facts, PEER_FIX[1:] + PEER_FIX[:1]
    )


# The timeouts torch itself applies to a rendezvous that never completes (torch 2.13): the store's wait
# is the process group's timeout (gloo 30 min, NCCL 10 min: torch/distributed/constants.py), and
# torchrun's static and c10d rendezvous give up after 600 s (static_tcp_rendezvous.py,
# dynamic_rendezvous.py join timeout).
TORCH_SETUP_TIMEOUT_S = {"gloo": 1800, "nccl": 600, "static": 600, "c10d": 600, None: 1800}


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


def rendezvous_facts(v: ProcessView, waited_s: float) -> tuple[str, list[str], tuple[str, ...]]:
    """(what it waits for, evidence lines, fix) from a waiting process's rendezvous read."""
    r = v.ev.rendezvous
    store = f"{r.host or '?'}:{r.port}" if r is not None and r.port else None
    unit = "node" if v.role == Role.LAUNCHER else "rank"
    ev: list[str] = []
    what = "peers that have not joined"
    if r is not None and store:
        if r.hosts_store and r.clients is not None and r.world_size:
            what = f"{unit}s: {r.clients} of {r.world_size} joined the store at {store}"
            ev.append(
                f"the store at {store} is hosted by this process and has accepted {r.clients} of "
                f"{r.world_size} {unit}s' connections (this machine's TCP table)"
            )
        elif r.connected:
            what = f"the other {unit}s at the store at {store}"
            what += f" ({r.world_size} expected)" if r.world_size else ""
            ev.append(f"connected to the store at {store}; waiting for the other {unit}s to join it")
        else:
            what = f"the store at {store}, which does not answer (its host has not started it, or it is unreachable)"
            ev.append(f"no connection to the store at {store}: torch retries until its timeout")
    if r is not None and r.rank is not None:
        ev.append(f"this process is {unit} {r.rank}" + (f" of {r.world_size}" if r.world_size else ""))
    torch_s = TORCH_SETUP_TIMEOUT_S.get(r.backend if r is not None else None, 1800)
    backend = r.backend if r is not None and r.backend else "default"
    ev.append(
        f"waiting for {_minutes(waited_s)}; torch itself gives up after {_minutes(torch_s)} "
        f"({backend} setup timeout) unless timeout= was set"
    )
    fix = (
        f"Check that every {unit} was started"
        + (f": {r.world_size} in all" if r is not None and r.world_size else "")
        + " (torchrun --nnodes/--nproc-per-node).",
        (f"Check that MASTER_ADDR/MASTER_PORT (here {store})" if store else "Check that MASTER_ADDR/MASTER_PORT")
        + " are the same on every node and reachable from each (firewall, the right interface).",
        "Fail sooner: init_process_group(timeout=timedelta(minutes=5)), or torchrun --rdzv-conf join_timeout=300; "
        "hangwatch declares the job hung after --rendezvous-timeout.",
        RENDEZVOUS_FIX[2],
    )
    return what, ev, fix


def _rendezvous_wait(scene: Scene, g: RankGroups) -> Hit | None:
    waiting = [v for r, v in sorted(g.by_rank.items()) if r in g.in_rdzv]
    waiting += [v for v in _setup_waiters(scene) if v.info.rank is None]
    if not waiting:
        return None
    v = waiting[0]
    t = v.main_thread
    if t is None:
        return None
    frame = innermost_user(t.frames)
    ev = [_groups_text(g.groups)] if g.groups else [f"{v.label()} in {describe(innermost_explaining(t.frames))}"]
    if g.world:
        ev.append(f"WORLD_SIZE={g.world}; rank processes here: {sorted(g.by_rank)}")
    who = (
        (_plural(g.in_rdzv).capitalize() + (" wait" if len(g.in_rdzv) > 1 else " waits"))
        if g.in_rdzv
        else f"{v.label().capitalize()} waits"
    )
    return _joining(scene, v, t, frame, 0.85, f"{who} at process-group setup ({describe(frame)}) for", ".", ev)


def _joining(
    scene: Scene, v: ProcessView, t: ThreadView, at: Frame | None, sure: float, head: str, tail: str, ev: list[str]
) -> Hit:
    """A wait at rendezvous for the peers not joined (the summary: ``head``, what it waits for, ``tail``), with what
    was measured of the rendezvous as evidence: ``End("joining")``, judged as such."""
    waited = max(0.0, scene.evidence.started_at - v.info.create_time) if v.info.create_time else v.duration_s
    what, facts, fix = rendezvous_facts(v, waited)
    said = f"{head} {what}{tail}"
    return named(
        Finding(Cause.DISTRIBUTED_RENDEZVOUS_WAIT, sure, said, v.where(t, at), (*ev, *facts), fix), End("joining", what)
    )


def _setup_waiters(scene: Scene) -> list[ProcessView]:
    """Processes that are not ranks by their environment (a plain `python train.py` calling
    init_process_group(rank=..., world_size=...)) waiting at process-group setup."""
    return [
        v
        for v in scene.views
        if v.role in (Role.MAIN, Role.CHILD)
        and (t := v.main_thread) is not None
        and _rendezvous(t) is not None
        and _collective(t) is None
    ]


def distributed_rule(scene: Scene) -> list[Hit]:
    """distributed.*: ranks in a collective while the culprit is elsewhere, missing, or never joined."""
    ranks = _ranks(scene)
    g = _classify(ranks)
    hits: list[Hit] = []
    if g.in_coll and g.elsewhere:
        hits.append(_peer_stuck(scene, g))
    elif g.in_coll and _missing_ranks(g.world, g.by_rank):
        hits.append(_peer_missing(scene, g))
    elif len(g.in_coll) >= 2:
        hit = _diverged(g, recorded=any(v.ev.flight is not None for v in ranks))
        if hit is not None:
            hits.append(hit)
    if not g.in_coll:
        hit = _rendezvous_wait(scene, g)
        if hit is not None:
            hits.append(hit)
    hits.extend(_launcher_rendezvous(scene, ranks))
    return hits


def _missing_ranks(world: int | None, by_rank: dict[int, ProcessView]) -> list[int]:
    if not world:
        return []
    return [r for r in range(world) if r not in by_rank]


def _launcher_rendezvous(scene: Scene, ranks: list[ProcessView]) -> list[Hit]:
    """torchrun itself waiting in elastic rendezvous (another node never came), before any rank exists."""
    if ranks:
        return []
    hits = []
    for v in scene.views:
        t = v.main_thread
        if v.role != Role.LAUNCHER or t is None or not t.has_stack:
            continue
        f = _rendezvous(t)
        if f is None:
            continue
        head = f"The launcher (pid {v.pid}) waits in rendezvous ({describe(f)}) for"
        ev = [f"{v.label()} in {describe(f)}", "no rank processes exist yet"]
        hits.append(_joining(scene, v, t, f, 0.8, head, "; no rank has started on this node.", ev))
    return hits
