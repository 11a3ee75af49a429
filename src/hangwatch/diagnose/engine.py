"""Run every rule over the evidence, rank the findings, decide the verdict."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace

from hangwatch.causes import CATALOGUE, Cause
from hangwatch.diagnose import proof
from hangwatch.diagnose.chains import STATE_WORDS, Chain, WaitGraph
from hangwatch.diagnose.code import busy_loop_rule, deadlock_rule, exit_wait_rule
from hangwatch.diagnose.collectives import flight_rule
from hangwatch.diagnose.compile import compile_rule
from hangwatch.diagnose.dataloader import dataloader_rule, fork_rule, shutdown_rule
from hangwatch.diagnose.distributed import distributed_rule
from hangwatch.diagnose.gpu import annotate, gpu_activity_rule, kernel_rule
from hangwatch.diagnose.graph import P2P_WORDS, RANK_RESOURCES, build_graph
from hangwatch.diagnose.io import network_wait_rule, storage_wait_rule
from hangwatch.diagnose.lost import lost_work_rule
from hangwatch.diagnose.native import native_fork_rule
from hangwatch.diagnose.output import output_buffered_rule
from hangwatch.diagnose.process import child_wait_rule, input_wait_rule, stopped_rule
from hangwatch.diagnose.scene import Hit, Rule, Scene
from hangwatch.diagnose.state import (
    ALIVE,
    VERDICTS,
    moving,
    process_state,
    progressing,
    runs,
    self_held_alive,
    thread_state,
)
from hangwatch.diagnose.views import ProcessView, ThreadView, describe, innermost_explaining, innermost_user
from hangwatch.diagnose.waits import lock_wait_rule
from hangwatch.fixes import P2P_FIX, SELF_WAIT_FIX, UNKNOWN_FIX
from hangwatch.records.evidence import Evidence, Role
from hangwatch.records.incident import Finding, Proof, ProofKind, Verdict

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
    network_wait_rule,
    storage_wait_rule,
    busy_loop_rule,
    exit_wait_rule,
    deadlock_rule,
    native_fork_rule,
    kernel_rule,
    gpu_activity_rule,
)


@dataclass(frozen=True)
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
    graph = _graph(scene)
    hits = [_judged(h, scene, graph) for h in hits]
    if graph is not None:
        hits = [_follow_chain(h, graph, scene) for h in hits]
        hits += _unnamed(hits, graph, scene)
        hits = [_placed(h, graph, scene) for h in hits]
    hits = [_thread_end(_work_elsewhere(h, scene), scene) for h in hits]
    hits = rank(_precise_names(hits))
    if hits:
        verdict, findings = hits[0].verdict or Verdict.HUNG, tuple(h.finding for h in hits)
    else:
        # Without a named cause the samples decide: progress, else alive when anything of the job moves or will by
        # itself, else hung for the clock to confirm (no proof: --min-stall decides).
        moves = moving(scene)
        verdict = Verdict.PROGRESSING if progressing(scene) else Verdict.SLOW if moves else Verdict.HUNG
        loop = _unproven_loop(graph, scene) if verdict == Verdict.HUNG and graph is not None else None
        findings = (loop or _unknown(scene, moves),)
    return Diagnosis(verdict, annotate(findings, verdict, scene), graph)


def _judged(hit: Hit, scene: Scene, graph: WaitGraph | None) -> Hit:
    """A finding its namer left without a verdict takes the one measured, in this order:

    - its thread's state (the state module's ``VERDICTS``): working, asleep on a timer or waking, slow (with the
      state's proof of work); stopped, ``stopped`` with that state as the proof (a stopped process runs again
      only when continued, whatever waits on it); a state that says nothing either way (seen too briefly, not
      read) of a process at CPU, slow (a process at CPU is alive, as ``state.moving`` says of a job);
    - else what its wait leads to (``_alive_end``): its process's chain ending at a holder alive, or a process it
      started measured working: slow, that fact said, ranked as a wait the chain does not bear out (a
      contradicted hang's confidence, at most);
    - else hung without proof, for the chain (``_follow_chain``) to prove (a timer past the bounds, a cycle,
      nobody: the chain's proof, which a wait with a timeout never gets) or contradict, and else for --min-stall.

    A cause that is progress the signal does not show (a buffered log) names a job that works: with the job
    progressing, it is progressing."""
    if hit.verdict is not None:
        return hit
    f, w = hit.finding, hit.finding.where
    v = scene.view(w.pid) if w is not None and w.pid is not None else None
    if v is None:
        return Hit(f, Verdict.HUNG)
    t = next((x for x in v.threads if w is not None and x.tid == w.tid), v.main_thread)
    m = thread_state(v, t)
    if CATALOGUE[Cause(f.cause)].unseen_progress and m.state == "working" and progressing(scene):
        return Hit(f, Verdict.PROGRESSING)
    if m.state in ALIVE:
        return Hit(replace(f, proof=f.proof or (proof.work(m.fact) if m.proves_work else None)), Verdict.SLOW)
    if m.state == "stopped":
        return Hit(replace(f, proof=f.proof or proof.hang(m.fact)), Verdict.STOPPED)
    used = runs(v) if VERDICTS[m.state][0] is None else None
    if used is not None:
        return Hit(replace(f, evidence=(*f.evidence, f"{used}; what it does was not read: {m.fact}")), Verdict.SLOW)
    alive = _alive_end(v, t, scene, graph)
    if alive is None:
        return Hit(f, Verdict.HUNG)
    said, facts, work = alive
    return Hit(
        replace(
            f,
            summary=f"{f.summary.rstrip('.')}; {said}.",
            evidence=(*f.evidence, *facts),
            proof=f.proof or work,
            confidence=min(f.confidence, CONTRADICTED),
        ),
        Verdict.SLOW,
    )


def _alive_end(
    v: ProcessView, t: ThreadView | None, scene: Scene, graph: WaitGraph | None
) -> tuple[str, tuple[str, ...], Proof | None] | None:
    """What the wait of ``v``'s main thread leads to, where it is alive: its chain's end (a compiler it reads from,
    a holder asleep on a timer), else a process it started measured working (the work the wait may end with). A
    sentence of it, the facts in words, and the proof of work where one was measured; None where nothing it waits
    on is seen alive."""
    if t is not v.main_thread:
        return None  # the graph's chains are the processes' main waits: another thread's wait is its own
    chain = next((c for c in graph.chains if c.waiter == f"pid:{v.pid}"), None) if graph is not None else None
    if chain is not None and chain.proof is not None and chain.proof.kind == ProofKind.HANG:
        return None  # its own wait is proven hung: the work of another process does not end it
    if chain is not None and chain.ending in ALIVE:
        kept = chain.proof if chain.proof is not None and chain.proof.kind == ProofKind.WORK else None
        is_ = STATE_WORDS.get(chain.ending, chain.ending)
        return f"{chain.hops[-1].words}, and {chain.end.label} is {is_}: {chain.end.fact}", chain.lines(), kept
    fact = _working_descendant(scene, v.pid)
    return None if fact is None else (f"{fact}: the wait may end with that work", (fact,), proof.work(fact))


def _working_descendant(scene: Scene, pid: int) -> str | None:
    """The first process ``pid`` started (or one of theirs) that the state module proves working, in words."""
    for kid in _descendants(scene, pid):
        m = process_state(kid)
        if m.proves_work:
            return m.fact if m.fact.startswith(kid.label()) else f"{kid.label()} works: {m.fact}"
    return None


def _place(h: Hit) -> tuple[str, int] | None:
    w = h.finding.where
    return (w.file, w.line) if w is not None and w.file and w.line is not None else None


def _placed(hit: Hit, graph: WaitGraph, scene: Scene) -> Hit:
    """A finding at a process that runs no file of the user's (``python -c``, a native helper) points at the first
    process along its own chain that does, at its line: where the user can change what the wait waits for (the
    parent holding the lock its `-c` child waits for, at the line where it waits for that child)."""
    f = hit.finding
    if f.where is None or f.where.file or f.where.pid is None:
        return hit
    chain = next((c for c in graph.chains if c.waiter == f"pid:{f.where.pid}"), None)
    for hop in chain.hops if chain is not None else ():
        v = scene.view(int(hop.holder[4:])) if hop.holder.startswith("pid:") else None
        t = v.main_thread if v is not None else None
        frame = innermost_user(t.frames) if t is not None and t.frames else None
        if v is not None and frame is not None:  # the place only: the finding stays the waiter's (its pid, tid)
            at = v.where(t, frame)
            where = replace(f.where, file=at.file, line=at.line, function=at.function, code=at.code)
            said = f"the place is {v.label()}'s, at {describe(frame)}: {hop.words}"
            return replace(hit, finding=replace(f, where=where, evidence=(*f.evidence, said)))
    return hit


def _work_elsewhere(hit: Hit, scene: Scene) -> Hit:
    """A hang named without proof while a process the waiter started (a child, a grandchild) is measured working, or
    while another thread of its own process that could release its thread-level wait (a lock, an event, a queue, a
    join) is, is not declared by the clock: the wait may end with that work (a parent in ``accept()`` while the
    evaluator it started computes, then connects; the exit's join of a listener whose stop event a flushing thread
    sets when it is done). It is slow, with the work as its proof where the state module proves it (bounded by
    --max-slow), else judged against the job's history; never by --min-stall."""
    f = hit.finding
    w = f.where
    if hit.verdict != Verdict.HUNG or f.proof is not None or w is None or w.pid is None:
        return hit
    fact = _working_descendant(scene, w.pid)
    if fact is not None:
        return _not_hung(f, f"Not proven hung: {fact}; the wait may end with that work.", (fact,), proof.work(fact))
    v = scene.view(w.pid)
    t = next((x for x in v.threads if x.tid == w.tid), None) if v is not None and w.tid is not None else None
    if v is None or t is None or proof.sync_wait(t) is None:
        return hit  # only another thread releases a thread-level wait: a socket's or a child's is another's
    for o in v.threads:
        m = thread_state(v, o)
        if o.tid != t.tid and m.state == "working" and proof.may_release(o):
            fact = f"{v.label()}, thread '{o.name}': {m.fact}"
            said = f"Not proven hung: another thread of it works ({fact}); the wait may end with that work."
            return _not_hung(f, said, (fact,), proof.work(fact) if m.proves_work else None)
    return hit


def _descendants(scene: Scene, pid: int) -> list[ProcessView]:
    """The processes ``pid`` started, and theirs, breadth first."""
    out: list[ProcessView] = []
    todo = [pid]
    while todo:
        kids = [c for p in todo for c in scene.children(p) if c not in out]
        out += kids
        todo = [c.pid for c in kids]
    return out


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
        and proof.sync_wait(o) in ("lock", "event", "queue", "barrier")
    ]
    end = ends[0] if len(ends) == 1 else None  # two or more: which one the others wait on is not measured
    if end is None or end.user_frame is None:
        return hit
    frame, kind = end.user_frame, proof.sync_wait(end) or "event"
    if any(x.file.endswith("/queue.py") for x in end.frames):
        kind = "queue"  # a queue's get or put waits on the queue's condition: the queue is what it waits on
    elif any(x.file.endswith("/threading.py") and "Semaphore." in x.function for x in end.frames):
        kind = "semaphore"
    at = v.where(end, frame)
    said = (
        f"the one thread of {v.label()} blocked in the user's own wait is '{end.name}': it waits on "
        f"{proof.article(kind)} {kind} at {describe(frame)}, and no thread of the process can run to release it"
    )
    where = replace(w, file=at.file, line=at.line, function=at.function, code=at.code)
    return replace(
        hit, finding=replace(f, where=where, summary=f"{f.summary.rstrip('.')}; {said}.", evidence=(*f.evidence, said))
    )


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


def rank(hits: list[Hit]) -> list[Hit]:
    """Most confident first, except that a finding with a proof (of a hang or of work) outranks every finding
    without one at the same place (file and line): a worker caught on its way to a lock in one sample gets a
    weaker reading than its sibling proven at that very line, and the proof, not the luck of a sample, leads."""
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

    return sorted(hits, key=key)


def _graph(scene: Scene) -> WaitGraph | None:
    try:
        return build_graph(scene)
    except Exception:  # the graph adds to the rules; a fault in it must not hide what they found
        if os.environ.get(STRICT_ENV):
            raise
        log.exception("the wait-for graph failed")
        return None


def _follow_chain(hit: Hit, graph: WaitGraph, scene: Scene) -> Hit:
    """The verdict follows the chain. Proof of work is never killed: a hang a rule names without proof, at a
    waiter whose chain ends in proven work, or at the working process at its end, is that waiter waiting for
    work (bounded by --max-slow). And a hang a rule names without proof, at a process on a chain the graph proves (a
    cycle, a holder gone, stopped or parked, a loop with no way out), carries that chain's proof."""
    f = hit.finding
    if f.proves_hang or f.where is None:
        return hit
    at = f"pid:{f.where.pid}"
    if hit.verdict != Verdict.HUNG:
        return _proven_by_chain(hit, graph, at)
    v = scene.view(f.where.pid)
    if v is not None and v.ended:  # what it waited for came: a process that ends is not hung
        return _not_hung(f, f"Not hung: {v.ended}.", (v.ended,))
    state = process_state(v) if v is not None and f.proof is None else None
    if v is not None and state is not None and state.proves_work:  # the process named hung is measured working
        # (its proof of work is the namer's that knows what the work is: a compile, a download)
        return _not_hung(f, f"Not proven hung: it works ({state.fact}).", (f"{v.label()} works: {state.fact}",))
    chain = next((c for c in graph.chains if c.ending == "working" and at in (c.end.id, c.waiter)), None)
    if chain is not None and chain.proof is not None:
        return _not_hung(f, "It works, though: " + ENDING_TEXT_WORKING, chain.lines(), chain.proof)
    if f.proof is not None:  # a rule's own proof of work stands
        return hit
    alive = self_held_alive(v) if v is not None else None
    if alive is not None:
        return _not_hung(f, f"Not proven hung: {alive}.", (alive,))
    proven = _proven_chain(graph, at)
    if proven is not None:
        return Hit(replace(f, proof=proven.proof, evidence=(*f.evidence, *proven.lines())), hit.verdict)
    own = next((c for c in graph.chains if c.waiter == at), None)
    if own is not None and (
        own.ending in ALIVE or own.ending == "ended" or (own.ending in ("unknown", "brief") and not own.end.measured)
    ):
        # The rule's hang stands on its own reading of the holder; the chain, followed hop by hop (a compiler
        # waiting in wait4 for its child), ends at a holder whose exit ends the wait, or one seen too briefly to
        # say what it does: no hang is measured, so none is said, and the finding ranks below the others.
        return _not_hung(f, "Not proven hung: " + own.ending_text + ".", own.lines())
    return hit


def _not_hung(f: Finding, said: str, facts: tuple[str, ...], proof: Proof | None = None) -> Hit:
    """A rule's unproven hang that a measured fact contradicts: `slow`, the fact said and added to its evidence, and
    ranked below the others (a proof of work, where one was measured, carried)."""
    return Hit(
        replace(
            f,
            summary=f"{f.summary} {said}",
            evidence=(*f.evidence, *facts),
            confidence=min(f.confidence, CONTRADICTED),
            proof=proof if proof is not None else f.proof,
        ),
        Verdict.SLOW,
    )


def _proven_by_chain(hit: Hit, graph: WaitGraph, at: str) -> Hit:
    """A finding a rule calls alive (slow, waiting) with no proof either way, at a process on a chain the graph
    proves hung (a cycle, a holder gone or stopped, a timer past --max-slow): the chain decides, hung, with its
    proof; the rule's name stays (its alive cause becomes its hung one: a slow worker, a stuck one)."""
    f = hit.finding
    if f.proof is not None or hit.verdict not in (Verdict.SLOW, Verdict.WAITING):
        return hit
    chain = _proven_chain(graph, at)
    if chain is None:
        return hit
    return Hit(
        replace(
            f,
            cause=HUNG_CAUSE.get(f.cause, f.cause),
            proof=chain.proof,
            evidence=(*f.evidence, *chain.lines()),
            summary=f.summary.rstrip(".") + f"; and {chain.ending_text}.",
            confidence=max(f.confidence, 0.8),
        ),
        Verdict.HUNG,
    )


def _proven_chain(graph: WaitGraph, at: str) -> Chain | None:
    """A chain through ``at`` (as waiter, holder or end) that the graph proves hung: its own first (the words of a
    rank's own wait, not of another rank that waits on it)."""
    proven = [
        c
        for c in graph.chains
        if c.proof is not None
        and c.verdict == Verdict.HUNG
        and c.proof.kind == ProofKind.HANG
        and at in {c.waiter, c.end.id, *(h.holder for h in c.hops)}
    ]
    return min(proven, key=lambda c: c.waiter != at, default=None)


# An alive cause whose hang, once proven, has a name of its own.
HUNG_CAUSE = {Cause.DATALOADER_WORKER_SLOW: Cause.DATALOADER_WORKER_STUCK}
CONTRADICTED = 0.4  # the most a finding whose hang its own chain does not bear out keeps


def _unnamed(hits: list[Hit], graph: WaitGraph, scene: Scene) -> list[Hit]:
    """A chain the graph proves hung that no finding carries is hung all the same: one finding per such chain,
    with a generic cause (``code.deadlock`` for a cycle within one process, ``process.waits_on`` otherwise),
    at the first waiter's own line, in the chain's words. A namer that knows the shape names it better."""
    covered = {f"pid:{h.finding.where.pid}" for h in hits if h.finding.proves_hang and h.finding.where is not None}
    out: list[Hit] = []
    # a cycle is named from one of its own members (the ranks that send to each other), not from a process
    # that only waits on it (their launcher, joining them)
    for c in sorted(graph.chains, key=lambda c: not (c.ending == "cycle" and c.waiter == c.end.id)):
        if c.verdict != Verdict.HUNG or c.proof is None or c.proof.kind != ProofKind.HANG:
            continue
        members = {c.waiter, *(h.holder for h in c.hops)}
        if members & covered:
            continue
        covered |= members
        v = scene.view(int(c.waiter.split(":", 1)[1]))
        t = v.main_thread if v is not None else None
        frame = innermost_explaining(t.frames) if t is not None else None
        pids = {m for m in members if m.startswith("pid:")}
        cause = Cause.CODE_DEADLOCK if c.ending == "cycle" and len(pids) == 1 else Cause.PROCESS_WAITS_ON
        summary, fix = f"{c.hops[0].words}: {c.ending_text}.", cause.info.fix
        if len(c.hops) == 1 and c.hops[0].holder == c.waiter and c.hops[0].resource in SELF_WAIT_FIX:
            fix = SELF_WAIT_FIX[c.hops[0].resource]  # it waits on itself: no lock order to fix
        if all(h.resource in RANK_RESOURCES for h in c.hops):  # ranks that wait on one another
            cause, fix = Cause.DISTRIBUTED_PEER_STUCK, P2P_FIX
            summary = _p2p_summary(c)
        where = v.where(t, frame) if v is not None and frame is not None else None
        if where is not None and v is not None and v.info.rank is not None:
            where = replace(where, rank=v.info.rank)
        out.append(
            Hit(
                Finding(
                    cause=cause,
                    confidence=0.7,
                    summary=summary,
                    where=where,
                    evidence=c.lines(),
                    fix=fix,
                    proof=c.proof,
                ),
                Verdict.HUNG,
            )
        )
    return out


def _unproven_loop(graph: WaitGraph, scene: Scene) -> Finding | None:
    """Nothing named, nothing moves, and the graph follows a loop of waits it cannot prove (a member could still be
    woken: another of its threads could run, or its main thread was not blocked for the whole window): the loop,
    named by its hops, for the clock to confirm (no proof: the verdict is what it was without a name). Was `unknown`
    (an asyncio loop awaiting a child that fills a pipe only it reads)."""
    for c in graph.chains:
        on_loop = c.end.id == c.waiter and len({h.waiter for h in c.hops}) >= 2  # it leads back to its waiter
        if (
            c.proof is not None
            or not on_loop
            or any(h.timeout is True for h in c.hops)
            or not c.waiter.startswith("pid:")
        ):
            continue
        v = scene.view(int(c.waiter[4:]))
        t = v.main_thread if v is not None else None
        frame = innermost_explaining(t.frames) if t is not None else None
        said = " -> ".join(h.words for h in c.hops)
        return Finding(
            cause=Cause.PROCESS_WAITS_ON,
            confidence=0.5,
            summary=f"{said}: a loop of waits, not proven (a process on it could still be woken: another of its "
            "threads could run, or its main thread was not blocked for the whole window).",
            where=v.where(t, frame) if v is not None and frame is not None else None,
            evidence=c.lines(),
            fix=Cause.PROCESS_WAITS_ON.info.fix,
        )
    return None


def _p2p_summary(c: Chain) -> str:
    """A chain of point-to-point calls in words: each hop, and what the ending makes them."""
    hops = [h.words for h in c.hops]
    said = hops[0][:1].upper() + hops[0][1:] + "".join(f", while {w}" for w in hops[1:])
    if c.ending == "cycle" and len(c.hops) == 2 and all(h.resource in P2P_WORDS for h in c.hops):
        return f"{said}: each waits for the other to post the matching call, so none ever completes (hung)."
    if c.ending == "cycle":
        return f"{said}: each waits for the next, so none ever completes (hung)."
    return f"{said}: {c.ending_text}."


ENDING_TEXT_WORKING = "the wait ends when its work does (waiting, bounded by --max-slow)."


def _primary(scene: Scene) -> ProcessView | None:
    order = (Role.MAIN, Role.RANK, Role.CHILD, Role.LAUNCHER, Role.ORPHAN, Role.DATALOADER_WORKER)
    for role in order:
        for v in scene.views:
            if v.role == role and v.info.is_python and v.has_stacks:
                return v
    return scene.views[0] if scene.views else None


def what_moves(ev: Evidence) -> str | None:
    """What in the job still moves, or will by itself, in words; None when nothing does. A startup
    probe counts towards "nothing moves, N probes in a row" only when this is None, whatever the
    rules named (a rank downloading while the others wait at a barrier is not still)."""
    return moving(Scene.of(ev))


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
        if t is not None and t.woke_often:
            ev.append(f"the main thread woke {t.wakeups} times in {v.duration_s:.1f} s (a sleep, poll or retry loop)")
    # No rule names the wait, but a measured fact may still say the job works (a thread reading a slow disk
    # while main waits on its queue): work is never bounded by the step history, only by --max-slow.
    works = next((w.work for w in scene.views if w.work is not None), None)
    if works is not None:
        ev.append(works)
    if moves is not None and moves != works:
        ev.append(moves)
    return Finding(
        cause=Cause.UNKNOWN,
        confidence=0.1,
        summary=f"No known hang pattern matched; {v.label()} is in {describe(frame)}.",
        where=v.where(t, frame) if frame else None,
        evidence=tuple(ev),
        fix=UNKNOWN_FIX,
        proof=proof.work(works) if works is not None else None,
    )
