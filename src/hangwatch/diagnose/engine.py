"""Run every rule over the evidence, rank the findings, decide the verdict."""

from __future__ import annotations

import logging
import os
from dataclasses import replace

from hangwatch.causes import CATALOGUE, Cause
from hangwatch.diagnose import proof, served
from hangwatch.diagnose.chains import ALIVE_ENDINGS, STATE_WORDS, WaitGraph, node_pid
from hangwatch.diagnose.code import busy_loop_rule, deadlock_rule, exit_wait_rule
from hangwatch.diagnose.collectives import flight_rule
from hangwatch.diagnose.compile import compile_rule
from hangwatch.diagnose.dataloader import dataloader_rule, fork_rule, shutdown_rule
from hangwatch.diagnose.distributed import distributed_rule
from hangwatch.diagnose.gpu import annotate, gpu_activity_rule, kernel_rule
from hangwatch.diagnose.graph import build_graph
from hangwatch.diagnose.io import network_wait_rule, storage_wait_rule
from hangwatch.diagnose.lost import lost_work_rule
from hangwatch.diagnose.native import native_fork_rule
from hangwatch.diagnose.output import output_buffered_rule
from hangwatch.diagnose.process import child_wait_rule, input_wait_rule, signal_wait_rule, stopped_rule
from hangwatch.diagnose.scene import Hit, Rule, Scene, named_at
from hangwatch.diagnose.state import (
    VERDICTS,
    moving,
    process_state,
    progressing,
    runs,
)
from hangwatch.diagnose.verdict import follow_chain, for_the_job, judged, unnamed, work_elsewhere
from hangwatch.diagnose.views import ProcessView, ThreadView, describe, innermost_explaining, innermost_user
from hangwatch.diagnose.waits import lock_wait_rule
from hangwatch.fixes import NO_WAY_OUT_FIX, UNKNOWN_FIX
from hangwatch.records.evidence import Evidence, Frame, Role
from hangwatch.records.incident import Finding, ProofKind, Verdict
from hangwatch.records.values import frozen

log = logging.getLogger(__name__)

RULES: tuple[Rule, ...] = (
    stopped_rule,
    input_wait_rule,
    flight_rule,
    distributed_rule,
    dataloader_rule,
    shutdown_rule,
    fork_rule,
    compile_rule,
    output_buffered_rule,
    lost_work_rule,
    lock_wait_rule,
    child_wait_rule,
    signal_wait_rule,
    network_wait_rule,
    storage_wait_rule,
    busy_loop_rule,
    exit_wait_rule,
    deadlock_rule,
    native_fork_rule,
    kernel_rule,
    gpu_activity_rule,
)


@frozen
class Diagnosis:
    """The verdict and the findings, root cause first."""

    verdict: Verdict
    findings: tuple[Finding, ...]
    graph: WaitGraph | None = None  # who waits on whom, each chain followed to its end

    @property
    def root(self) -> Finding:
        """The root cause: ``findings[0]`` (a diagnosis always has one, ``unknown`` at worst)."""
        return self.findings[0]


STRICT_ENV = "HANGWATCH_STRICT_RULES"


def diagnose(ev: Evidence, rules: tuple[Rule, ...] = RULES) -> Diagnosis:
    """Run every rule on the evidence; the verdict comes from the findings, else from the samples."""
    scene = Scene.of(ev)
    hits: list[Hit] = []
    for rule in rules:
        try:
            hits.extend(rule(scene))
        except Exception:  # a broken rule must not hide what the others found
            if os.environ.get(STRICT_ENV):
                raise  # tests: a rule that raises fails the test instead of passing by omission
            log.exception("rule %s failed", getattr(rule, "__name__", rule))
    hits += _by_state(scene, hits)
    graph = _graph(scene)
    hits = [judged(h, scene, graph) for h in hits]
    if graph is not None:
        hits = [follow_chain(h, graph, scene) for h in hits]
        hits += unnamed(hits, graph, scene)
        hits = [_upstream_place(_placed(h, graph, scene), graph, scene) for h in hits]
    hits = [for_the_job(_thread_end(work_elsewhere(h, scene), scene), graph, scene) for h in hits]
    hits = rank(_precise_names(hits), graph, scene)
    if hits:
        verdict, findings = hits[0].verdict or Verdict.HUNG, tuple(h.finding for h in hits)
    else:
        # Without a named cause the samples decide: progress, else alive when anything of the job moves or will by
        # itself, else hung for the clock to confirm (no proof: --min-stall decides).
        # (a Manager's server whose one running request nothing else could end moves by its own poll alone)
        moves = (None if served.still_but_server(graph) else moving(scene)) or (
            _wait_ends(graph, scene) if graph else None
        )
        verdict = Verdict.PROGRESSING if progressing(scene) else Verdict.SLOW if moves else Verdict.HUNG
        loop = _unproven_loop(graph, scene) if verdict == Verdict.HUNG and graph is not None else None
        unknown = _unknown(scene, moves)
        if verdict == Verdict.HUNG and graph is not None:
            unknown = _upstream_place(Hit(unknown, verdict), graph, scene).finding
        findings = (loop or unknown,)
    return Diagnosis(verdict, annotate(findings, verdict, scene), graph)


# A process that waits on nothing, named by its own state where that proves a hang and no namer named it: the
# chain of no hop whose end is the process itself (the verdict stage judges it as it judges a namer's)
STATE_CAUSE = {"stopped": Cause.PROCESS_STOPPED, "looping": Cause.CODE_BUSY_LOOP, "spinning": Cause.CODE_BUSY_LOOP}


def _by_state(scene: Scene, hits: list[Hit]) -> list[Hit]:
    """The job's primary process (its main, else a rank, ...), where nothing named it and its own measured state
    proves a hang (stopped, a loop with no way out, a spin that gets nowhere), while nothing else moves: no other
    process of the job, no other thread of it (each parked on its own primitives, native ones too), and, for a loop
    that only sleeps, no CPU or bytes of its own (a native thread's). Named by that state (``STATE_CAUSE``), at its
    main thread's line. Where a namer names such a state (the busy-loop's, the stopped one's), it says it better."""
    v = _primary(scene)
    t = v.main_thread if v is not None else None
    if v is None or t is None or any(h.finding.where is not None and h.finding.where.pid == v.pid for h in hits):
        return []
    if progressing(scene) or moving(scene, besides=v.pid) is not None:
        return []  # the job progresses, or another process of it moves (works, wakes, moves data): the job is alive
    m = process_state(v)
    cause = STATE_CAUSE.get(m.state)
    if cause is None or not (m.proves_hang or VERDICTS[m.state][1]):
        return []
    if m.state != "stopped" and not proof.sealed_but(v, t.tid):
        return []  # another thread of it may act: a trainer thread, a native pool, a thread in a read or a poll
    if m.state == "looping" and (runs(v) is not None or v.moved_data):
        return []  # a loop that only sleeps in a process at CPU or moving bytes: something of it works
    said = f"{v.label()} is {STATE_WORDS.get(m.state, m.state)}: {m.fact}."
    fix = NO_WAY_OUT_FIX if m.state == "looping" else cause.info.fix  # (a spin's: its exit condition is never met)
    return [named_at(v, t, innermost_explaining(t.frames), cause, 0.5, said, (m.fact,), fix)]


def _place(h: Hit) -> tuple[str, int] | None:
    w = h.finding.where
    return (w.file, w.line) if w is not None and w.file and w.line is not None else None


def _placed(hit: Hit, graph: WaitGraph, scene: Scene) -> Hit:
    """A finding at a process that runs no file of the user's (``python -c``, a native helper) points at the first
    process along its own chain that does, at its line: where the user can change what the wait waits for (the
    parent holding the lock its `-c` child waits for, at the line where it waits for that child); else at the
    nearest process that waits for it and does, at the line where it waits."""
    f = hit.finding
    if f.where is None or f.where.file or f.where.pid is None:
        return hit
    chain = graph.chain_of(f.where.pid)
    for hop in chain.hops if chain is not None else ():
        v = scene.view(int(hop.holder[4:])) if hop.holder.startswith("pid:") else None
        t = v.main_thread if v is not None else None
        frame = innermost_user(t.frames) if t is not None and t.frames else None
        if v is not None and frame is not None:  # the place only: the finding stays the waiter's (its pid, tid)
            return _moved(hit, v, t, frame, f"the place is {v.label()}'s, at {describe(frame)}: {hop.words}")
    # (nothing of its own chain runs a user's file, or it waits on nothing: stopped; the nearest process that waits
    # for it and does, at the line where it waits: the grandchild stopped under a `-c` child, at main's run())
    ways = []  # (how many hops before it, the hops from that waiter to it)
    for c in graph.chains:
        at = next((i for i, hop in enumerate(c.hops) if hop.holder == f"pid:{f.where.pid}"), None)
        ways += [(at - i, c.hops[i : at + 1]) for i in range(at + 1)] if at is not None else []
    for _, hops in sorted(ways, key=lambda w: w[0]):
        ids = [int(x) for x in hops[0].waiter.split(":")[1:]] if hops[0].waiter.startswith(NODES) else []
        v = scene.view(ids[0]) if ids else None
        t = next((x for x in v.threads if x.tid == ids[-1]), v.main_thread) if v is not None else None
        frame = innermost_user(t.frames) if t is not None and t.frames else None
        if v is not None and frame is not None:
            how = " -> ".join(h.words for h in hops)
            return _moved(
                hit, v, t, frame, f"the place is {v.label()}'s, at {describe(frame)}, whose wait leads to it: {how}"
            )
    return hit


def _moved(
    hit: Hit, v: ProcessView, t: ThreadView | None, at: Frame, said: str, summary: str = "", whole: bool = False
) -> Hit:
    """``hit`` named at frame ``at`` of thread ``t`` of ``v`` instead, ``said`` added to its evidence (and its summary
    replaced, where given). The finding stays its waiter's (its pid and tid), but ``whole``: the process too."""
    f, w = hit.finding, v.where(t, at)
    where = (
        w if whole or f.where is None else replace(f.where, file=w.file, line=w.line, function=w.function, code=w.code)
    )
    return replace(hit, finding=replace(f, where=where, summary=summary or f.summary, evidence=(*f.evidence, said)))


def _upstream_place(hit: Hit, graph: WaitGraph, scene: Scene) -> Hit:
    """An unproven hang named at a process whose chain runs, through other processes of the job, to one blocked on
    what the graph did not follow (a connect(), an event a thread it does not follow sets): the place is that last
    process's, at its line, the deepest wait measured (the child reading a pipe only its parent writes, the parent
    blocked in an Event.wait nothing followed: the parent's line). The finding stays the waiter's; only the place
    moves, said in its words. Nothing is proven by it."""
    f = hit.finding
    if hit.verdict != Verdict.HUNG or f.proof is not None or f.where is None or f.where.pid is None:
        return hit
    chain = graph.chain_of(f.where.pid)
    if chain is None or chain.ending != "blocked" or not chain.hops or not chain.end.id.startswith("pid:"):
        return hit
    v = scene.view(int(chain.end.id[4:]))
    t = v.main_thread if v is not None and v.pid != f.where.pid else None
    frame = innermost_user(t.frames) if t is not None and t.blocked and t.frames else None
    if v is None or t is None or frame is None or not chain.end.in_job:
        return hit
    said = f"the place is {v.label()}'s, at {describe(frame)}, where the chain stops: {chain.end.fact}"
    if f.cause == Cause.UNKNOWN:  # no waiter named: the place, and the process, are where the chain stops
        summary = f"{f.summary.rstrip('.')}; its wait goes to {v.label()}, blocked at {describe(frame)}."
        return _moved(hit, v, t, frame, said, summary, whole=True)
    return _moved(hit, v, t, frame, said)


def _thread_end(hit: Hit, scene: Scene) -> Hit:
    """A hang named at a thread that waits for another thread to finish (a join, a future's result, an event loop
    awaiting its executor) in a process where no thread can run: the place is the one other thread blocked in the
    user's own wait (a task blocked on a semaphore nobody releases), where the user can change what it waits for;
    with two or more such threads, the place stays (which one the others wait on is not measured). The finding
    stays the waiter's (its pid and tid); only the place moves, said in its words."""
    f, w = hit.finding, hit.finding.where
    v = scene.view(w.pid) if w is not None and w.pid is not None else None
    t = next((x for x in v.threads if x.tid == w.tid), None) if v is not None and w is not None else None
    if hit.verdict != Verdict.HUNG or w is None or v is None or t is None or not _awaits_a_thread(t):
        return hit
    if not proof.sealed_but(v, t.tid):
        return hit
    ends = [
        o
        for o in v.threads
        if o.tid != t.tid
        and o.has_stack
        and o.blocked
        and o.user_frame is not None
        and not _awaits_a_thread(o)
        and proof.user_owned(o)
        and proof.sync_wait(o) not in (None, "join")
    ]
    end = ends[0] if len(ends) == 1 else None  # two or more: which one the others wait on is not measured
    if end is None or end.user_frame is None:
        return hit
    frame, kind = end.user_frame, proof.sync_wait(end) or "event"
    said = (
        f"the one thread of {v.label()} blocked in the user's own wait is '{end.name}': it waits on "
        f"{proof.article(kind)} {kind} at {describe(frame)}, and no thread of the process can run to release it"
    )
    return _moved(hit, v, end, frame, said, f"{f.summary.rstrip('.')}; {said}.")


def _awaits_a_thread(t: ThreadView) -> bool:
    """The thread waits for another thread's end or result: a join, a future's result, or an event loop with
    nothing to run but what its executor's threads will hand back (polling with no timeout)."""
    return (
        proof.sync_wait(t) == "join"
        or proof.waits_on_future(t)
        or bool(t.frames and t.frames[0].file.endswith("/selectors.py") and t.waits_forever)
    )


def _precise_names(hits: list[Hit]) -> list[Hit]:
    """A generic finding (a child, a pipe's holder: the graph's words for a wait) with a proof of work yields its
    place to a precise namer there that reads the job as alive too: the namer names the wait, the measured proof
    moves to it. The verdict stays alive either way; only the name changes (main reading a g++ it started, inside
    torch.compile, is the compile, not a pipe)."""

    def at(h: Hit) -> tuple[int | None, tuple[str, int] | None]:  # the process too: ranks share their lines
        return (h.finding.where.pid if h.finding.where else None, _place(h))

    precise = {
        at(h): i
        for i, h in enumerate(hits)
        if not CATALOGUE[Cause(h.finding.cause)].generic and h.verdict != Verdict.HUNG and h.finding.proof is None
    }
    out = list(hits)
    for h in hits:
        f, place = h.finding, at(h)
        if not (CATALOGUE[Cause(f.cause)].generic and f.proof is not None and f.proof.kind == ProofKind.WORK):
            continue
        if place[1] is None or place not in precise or h.verdict == Verdict.HUNG:
            continue
        i = precise.pop(place)
        named = out[i].finding
        out[i] = replace(out[i], finding=replace(named, proof=f.proof, evidence=(*named.evidence, f.proof.fact)))
    return out


def rank(hits: list[Hit], graph: WaitGraph | None = None, scene: Scene | None = None) -> list[Hit]:
    """Most confident first, except that a finding with a proof (of a hang or of work) outranks every finding
    without one at the same place (file and line): a worker caught on its way to a lock in one sample gets a
    weaker reading than its sibling proven at that very line, and the proof, not the luck of a sample, leads. And a
    proven finding in a cycle comes just before any proven finding at a process that only waits on that cycle (the
    cycle is the cause, as a stuck worker is its main process's); a hung finding at the process another's waits on
    comes before that one's (``_upstream_first``), and takes that one's confidence where it is higher (the same
    chain's: the waiter's finding was as sure of the wait it leads to). The cycle rule leaves confidences as read."""
    proven: dict[tuple[str, int], float] = {}
    for h in hits:
        place = _place(h)
        if place is not None and h.finding.proof is not None:
            proven[place] = max(proven.get(place, 0.0), h.finding.confidence)

    def key(h: Hit) -> float:
        place = _place(h)
        if h.finding.proof is None and place in proven:
            return -min(h.finding.confidence, proven[place] - 1e-6)
        return -h.finding.confidence

    keys = {id(h): key(h) for h in hits}
    hung = [h for h in hits if h.finding.proves_hang and h.finding.where is not None]
    for h in hung:  # (the cycle's best finding takes the place of the one waiting on it, where that is higher)
        loop, on_it = _loop_of(h, graph)
        if on_it:
            continue
        best = min((c for c in hung if c.finding.where and c.finding.where.pid in loop), key=key, default=None)
        if best is not None:
            keys[id(best)] = min(keys[id(best)], keys[id(h)] - 1e-9)
    sure = _upstream_first(hits, keys, graph, scene) if scene is not None else {}
    return [
        replace(h, finding=replace(h.finding, confidence=sure[id(h)]))
        if sure.get(id(h), 0.0) > h.finding.confidence
        else h
        for h in sorted(hits, key=lambda h: keys[id(h)])
    ]


NODES = ("pid:", "thread:")  # a process's node, a thread's (``thread:PID:TID``)


def _upstream(h: Hit, graph: WaitGraph | None, scene: Scene) -> int | None:
    """The process whose wait holds up ``h``'s: within a cycle of processes, the parent of ``h``'s process where it is
    one of the cycle (the parent made the pipes, took the locks in its order, holds what it never flushed or closed:
    its line is where the cycle is mended); off any cycle, the process its chain's first hop waits on."""
    pid = h.finding.where.pid if h.finding.where is not None else None
    loop, on_it = _loop_of(h, graph)
    if pid is None or graph is None or (loop and not on_it):
        return None  # (a wait on a cycle of others: rank's own rule)
    if on_it:
        v = scene.view(pid)
        return v.info.ppid if v is not None and v.info.ppid in loop else None
    c = graph.chain_of(pid)
    holder = c.hops[0].holder if c is not None and c.hops else ""
    q = node_pid(holder)
    return q if q != pid else None


def _upstream_first(hits: list[Hit], keys: dict[int, float], graph: WaitGraph | None, scene: Scene) -> dict[int, float]:
    """Each hung finding's upstream one (``_upstream``), hung too, is ranked just before it, unless only the one
    waiting is proven (the proof leads); repeated until nothing moves (a chain of three). Returns the confidences
    the moved ones take (the one they now precede had more)."""
    open_ = [h for h in hits if h.verdict == Verdict.HUNG and h.finding.where is not None]
    sure: dict[int, float] = {}
    ahead: set[tuple[int, int]] = set()  # (moved, before): two that point at each other move once, not in turn
    for _ in open_:
        moved = False
        for h in open_:
            q = _upstream(h, graph, scene)
            up = [c for c in open_ if c.finding.where and c.finding.where.pid == q]
            top = min(up, key=lambda c: keys[id(c)], default=None)
            if (
                top is None
                or _place(top) in (None, _place(h))
                or keys[id(top)] < keys[id(h)]
                or (id(h), id(top)) in ahead
            ):
                continue  # (no place: a process running no file of the user's, as a `python -c` reader, leads nowhere)
            if h.finding.proves_hang and not top.finding.proves_hang:
                continue
            ahead.add((id(top), id(h)))
            keys[id(top)] = keys[id(h)] - 1e-9
            sure[id(top)] = max(sure.get(id(top), 0.0), h.finding.confidence)
            moved = True
        if not moved:
            break
    return sure


def _loop_of(h: Hit, graph: WaitGraph | None) -> tuple[set[int], bool]:
    """The processes of the cycle that ``h``'s process's chain runs into, and whether it is one of them (else it
    only waits on a cycle of others); empty where its chain ends in no cycle."""
    pid = h.finding.where.pid if h.finding.where is not None else None
    c = graph.chain_of(pid) if graph is not None else None
    if c is None or c.ending != "cycle":
        return set(), False
    start = next(i for i, hop in enumerate(c.hops) if hop.waiter == c.hops[-1].holder)
    loop = {p for hop in c.hops[start:] for n in (hop.waiter, hop.holder) if (p := node_pid(n)) is not None}
    return loop, pid in loop


def _graph(scene: Scene) -> WaitGraph | None:
    try:
        return build_graph(scene)
    except Exception:  # the graph adds to the rules; a fault in it must not hide what they found
        if os.environ.get(STRICT_ENV):
            raise
        log.exception("the wait-for graph failed")
        return None


def _unproven_loop(graph: WaitGraph, scene: Scene) -> Finding | None:
    """Nothing named, nothing moves, and the graph follows a loop of waits it cannot prove (a member could still be
    woken: another of its threads could run, or its main thread was not blocked for the whole window), or a wait on
    the rest of the job, none of which moves (a Manager's request that only another request could end: a process
    may still send one): the chain, named by its hops, for the clock to confirm (no proof: the verdict is what it was
    without a name). Was `unknown` (an asyncio loop awaiting a child that fills a pipe only it reads)."""
    for c in graph.chains:
        on_loop = c.end.id == c.waiter and len({h.waiter for h in c.hops}) >= 2  # it leads back to its waiter
        on_rest = c.ending == "blocked" and c.end.id.startswith("job:")  # the rest of the job, still
        if (
            c.proof is not None
            or c.ending in ALIVE_ENDINGS  # (a loop through a pipe whose holder has a thread alive)
            or not (on_loop or on_rest)
            or any(h.timeout is True for h in c.hops)
            or not c.waiter.startswith("pid:")
            or c.hops[0].resource == served.REQUEST  # (the server's own chain: named at its clients)
        ):
            continue
        v = scene.view(int(c.waiter[4:]))
        t = v.main_thread if v is not None else None
        frame = innermost_explaining(t.frames) if t is not None else None
        said = " -> ".join(h.words for h in c.hops)
        words = (
            f"{said}: a loop of waits, not proven (a process on it could still be woken: another of its "
            "threads could run, or its main thread was not blocked for the whole window)."
            if on_loop
            else f"{said}: {c.end.fact}; not proven ({c.ending_text})."
        )
        return Finding(
            Cause.PROCESS_WAITS_ON,
            0.5,
            words,
            v.where(t, frame) if v is not None and frame is not None else None,
            c.lines(),
            served.FIX if c.hops[-1].resource == served.REQUEST else Cause.PROCESS_WAITS_ON.info.fix,
        )
    return None


def _wait_ends(graph: WaitGraph, scene: Scene) -> str | None:
    """The job's primary process waits on what the graph measured ending its wait (a holder that has exited, one
    asleep on a timer within the bounds, one working): its chain in words; None otherwise. Nothing named, the chain
    still decides: the wait ends by itself, not a clock's hang (a DataLoader worker killed, whose death torch's
    own check raises within 5 s)."""
    v = _primary(scene)
    c = graph.chain_of(v.pid if v is not None else None)
    if c is None or c.ending not in ALIVE_ENDINGS:
        return None
    return f"{' -> '.join(h.words for h in c.hops)}: {c.ending_text}"


def _primary(scene: Scene) -> ProcessView | None:
    order = (Role.MAIN, Role.RANK, Role.CHILD, Role.LAUNCHER, Role.ORPHAN, Role.DATALOADER_WORKER)
    for role in order:
        for v in scene.views:
            if v.role == role and v.info.is_python and v.has_stacks:
                return v
    return scene.views[0] if scene.views else None


def what_moves(ev: Evidence, graph: WaitGraph | None = None) -> str | None:
    """What in the job still moves, or will by itself, in words; None when nothing does. A startup
    probe counts towards "nothing moves, N probes in a row" only when this is None, whatever the
    rules named (a rank downloading while the others wait at a barrier is not still). As the diagnosis
    says (``graph``, its own): a Manager's server polling its stop event moves, and ends nothing."""
    return None if served.still_but_server(graph) else moving(Scene.of(ev))


def _unknown(scene: Scene, moves: str | None = None) -> Finding:
    """No cause named: where the job's primary process is, and what was measured of it (``moves``: what in the job
    moves, which makes it slow)."""
    v = _primary(scene)
    if v is None:
        return Finding(Cause.UNKNOWN, 0.1, "Nothing of the job could be captured.", None, (), UNKNOWN_FIX)
    t = v.main_thread
    frame = innermost_explaining(t.frames) if t else None
    ev = [f"{v.label()}: state {v.state}, {v.cpu_text()}"]
    if not v.info.is_python:
        ev.append(f"pid {v.pid} ({v.info.name}) is not a Python process; no Python stack")
    elif not v.has_stacks:
        ev.append("no Python stack could be read: " + (v.ev.samples[-1].stack_error or "unknown reason"))
    else:
        ev.append(f"main thread in {describe(frame)}" + (" (moving)" if t and t.stack_changed else " (not moving)"))
        if t is not None and t.blocked and t.last.syscall:  # what the kernel shows it waits in, and on what
            ev.append(f"the main thread: {t.wait_text}" + (f" on {t.last.fd_target}" if t.last.fd_target else ""))
        if t is not None and t.woke_often:
            ev.append(f"the main thread woke {t.wakeups} times in {v.duration_s:.1f} s (a sleep, poll or retry loop)")
    # No rule names the wait, but a measured fact may still say the job works (a thread reading a slow disk
    # while main waits on its queue): work is never bounded by the step history, only by --max-slow.
    works = next((w.work for w in scene.views if w.work is not None), None)
    if works is not None:
        ev.append(works)
    if moves is not None and moves != works:
        ev.append(moves)
    # (the loop around its wait, where capture read it: `while not os.path.exists(marker)`, whose test is its way out)
    at, reads = (frame.file, frame.function, frame.line) if frame else None, v.locals_of(t.tid) if t is not None else ()
    loop = next((r for r in reversed(reads) if r.loop and r.loop_line and (r.file, r.function, r.line) == at), None)
    around = f", in a loop at line {loop.loop_line} (`{loop.loop}`)" if loop is not None else ""
    said = f"No known hang pattern matched; {v.label()} is in {describe(frame)}{around}" + (
        f"; not hung: {moves.rstrip('.')}." if moves is not None else "."
    )
    return Finding(
        Cause.UNKNOWN,
        0.1,
        said,
        v.where(t, frame) if frame else None,
        tuple(ev),
        UNKNOWN_FIX,
        proof=proof.work(works) if works is not None else None,
    )


def worked_before(diagnosis: Diagnosis, fact: str) -> Diagnosis:
    """The same place in one stall, proven working by an earlier look (``fact``) where this one proves nothing either
    way: that proof of work stands, and an unproven hang is slow (supervise/stall/suspect.py keeps what each look
    proved)."""
    said = f"earlier in this stall, at the same place: {fact}"
    root = diagnosis.root
    same = replace(root, proof=proof.work(said), evidence=(*root.evidence, said))
    verdict = Verdict.SLOW if diagnosis.verdict == Verdict.HUNG else diagnosis.verdict
    return Diagnosis(verdict, (same, *diagnosis.findings[1:]))
