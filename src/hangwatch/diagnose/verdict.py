"""The verdict stage: each finding a namer left without a verdict takes the one its thread's measured state and its
wait's chain say (``judged``); a hang named without proof meets the chain that proves or contradicts it
(``follow_chain``) and the work it may end with (``work_elsewhere``); a chain the graph proves hung that no namer
names is named generically (``unnamed``). Only this stage, the graph's chains and the records make a verdict or a
proof (tests/unit/test_structure.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from hangwatch.causes import CATALOGUE, Cause, Nature
from hangwatch.diagnose import proof
from hangwatch.diagnose.acts import acts_by_itself, ends_itself
from hangwatch.diagnose.chains import (
    ALIVE_ENDINGS,
    ALL_ASLEEP,
    ENDED_BY_EXIT,
    ENDINGS,
    NOBODY,
    STATE_WORDS,
    Chain,
    WaitGraph,
    node_pid,
)
from hangwatch.diagnose.ends import end_verdict
from hangwatch.diagnose.own import thread_id
from hangwatch.diagnose.ranks import NAMES_DIFFER, P2P_WORDS, RANK_RESOURCES, SETUP, TAGS_DIFFER
from hangwatch.diagnose.scene import Hit, Scene
from hangwatch.diagnose.state import ALIVE, VERDICTS, process_state, progressing, runs, self_held_alive, thread_state
from hangwatch.diagnose.views import ProcessView, ThreadView, innermost_explaining, innermost_user
from hangwatch.fixes import (
    ALL_ASLEEP_FIX,
    CYCLE_FIX,
    DEADLOCK_FIX,
    EXIT_JOIN_FIX,
    FULL_BUFFER_FIX,
    GIL_FIX,
    GROUP_FIX,
    IMPORT_LOCK_FIX,
    LATE_TIMER_FIX,
    LOCK_KEPT_FIX,
    LONG_SLEEP_FIX,
    OTHERS_WAIT_FIX,
    P2P_FIX,
    P2P_TAG_FIX,
    PIDFD_WAIT_FIX,
    SELF_WAIT_FIX,
    WAIT_FOREVER_FIX,
)
from hangwatch.records.evidence import Role
from hangwatch.records.incident import Finding, Proof, ProofKind, Verdict


def judged(hit: Hit, scene: Scene, graph: WaitGraph | None) -> Hit:
    """A finding its namer left without a verdict takes the one measured, in this order:

    - its thread's state (the state module's ``VERDICTS``): seen too briefly to say (one sample), slow, unless its
      own chain proves more; working, asleep on a timer or waking, slow (with the
      state's proof of work), but for a main thread the graph follows as a waiter: asleep or waking, that is a
      wait that polls (a ``filelock`` acquire), and its chain decides; working, its own work is what was
      measured, and the wait named ranks as a contradicted one; stopped, ``stopped`` with that state as the proof
      (a stopped process runs again only when continued, whatever waits on it); a state that says nothing either
      way (seen too briefly, not read) of a process at CPU, slow (a process at CPU is alive, as ``state.moving``
      says of a job);
    - else what its wait leads to (``_alive_end``): its process's chain ending at a holder alive, or a process it
      started measured working: slow, that fact said, ranked as a wait the chain does not bear out (a
      contradicted hang's confidence, at most);
    - else, where its own state proves a hang (a counting spin, a loop with no way out, a timer past the bounds) and
      no process waits for it with a timeout, hung with that proof (a chain the graph proves through it speaks
      first, in the words of the wait it holds up);
    - else hung without proof, for the chain (``follow_chain``) to prove (a timer past the bounds, a cycle,
      nobody: the chain's proof, which a wait with a timeout never gets) or contradict, and else for --min-stall.

    Where it is working with its loop's locals advancing, in the job's own main or rank process, it is progressing.

    A cause that is progress the signal does not show (a buffered log) names a job that works: with the job
    progressing, it is progressing."""
    if hit.verdict is not None:
        return hit
    if hit.end is not None:
        return by_end(hit)
    f, w = hit.finding, hit.finding.where
    v = scene.view(w.pid) if w is not None and w.pid is not None else None
    if v is None:
        return Hit(f, Verdict.HUNG)
    t = next((x for x in v.threads if w is not None and x.tid == w.tid), v.main_thread)
    m = thread_state(v, t)
    if CATALOGUE[Cause(f.cause)].unseen_progress and m.state == "working" and progressing(scene):
        return Hit(f, Verdict.PROGRESSING)
    own = _chain_of(graph, v, t)
    # a wait that polls: its chain decides; so does a thread still for the whole window whose own wait the graph
    # proves hung: the bytes its process moved were another thread's (a read or a write returns, and wakes it)
    still = t is not None and t.has_stack and t.idle_throughout and own is not None and own.proves_hang
    polls = (m.state != "working" or still) and own is not None and _decisive(own)
    if m.state in ALIVE and not polls:
        work = f.proof or (proof.work(m.fact) if m.proves_work else None)
        if m.motion is not None and m.motion.advanced and v.role in OWN_ROLES:
            return Hit(replace(f, proof=work), Verdict.PROGRESSING)  # the job's own loop advances: progress
        # a wait named at a thread the graph follows as a waiter, yet measured working itself (not waking, as a
        # polling wait does): its own work, not the wait, is what was measured; it ranks as a contradicted one
        named_wait = CATALOGUE[Cause(f.cause)].nature != Nature.ALIVE
        return _slow(f, work=work, contradicted=m.state == "working" and own is not None and named_wait)
    if m.state == "stopped":
        return Hit(replace(f, proof=f.proof or proof.hang(m.fact)), Verdict.STOPPED)
    # a spin whose locals were not read, that nothing waits on (the job's own loop): whether it gets anywhere was
    # not read, as of a state that says nothing; one others wait on is the holder their chain ends at
    unread = m.state == "spinning" and m.motion is None and not _waited_on(graph, v)
    used = runs(v) if VERDICTS[m.state][0] is None or unread else None
    if used is not None:
        return _slow(f, facts=[f"{used}; what it does was not read: {m.fact}"])
    if m.state == "brief" and (own is None or own.proof is None):
        # seen too briefly to say that it stays there (a capture cut short on a loaded machine): not called hung
        return _slow(f, facts=[m.fact], contradicted=True)
    alive = _alive_end(v, t, scene, graph)
    at = f"pid:{v.pid}"
    if alive is None and m.proves_hang and not (graph is not None and _timed(graph, at)):
        # its own state proves it (a spin that gets nowhere, a loop with no way out, a long timer), unless a process
        # waits for it with a timeout (it may end it and go on: a timed wait never proves); a chain the graph proves
        # through it says it in the words of the wait it holds up (``follow_chain`` adds that proof)
        if graph is not None and _proven_chain(graph, at) is not None:
            return Hit(f, Verdict.HUNG)
        said = m.motion.proof_fact if m.motion is not None and m.motion.counting else m.fact
        return Hit(replace(f, proof=f.proof or proof.hang(said)), Verdict.HUNG)
    if alive is None:
        return Hit(f, Verdict.HUNG)
    said, facts, work = alive
    died = f.cause == Cause.DATALOADER_WORKER_DIED  # it says so itself: a crash on its way, no hang named
    if died:
        return _slow(f, facts=facts, work=work)
    return _slow(f, facts=facts, work=work, said=said, contradicted=True)


def _slow(
    f: Finding, *, facts: Iterable[str] = (), work: Proof | None = None, said: str = "", contradicted: bool = False
) -> Hit:
    """``f`` alive (slow): ``facts`` added to its evidence, ``said`` to its summary, ``work`` its proof where it has
    none; ``contradicted``, ranked as a hang its own measures do not bear out (``CONTRADICTED`` at most)."""
    summary = f"{f.summary.rstrip('.')}; {said}." if said else f.summary
    sure = min(f.confidence, CONTRADICTED) if contradicted else f.confidence
    return Hit(
        replace(f, summary=summary, evidence=(*f.evidence, *facts), proof=f.proof or work, confidence=sure),
        Verdict.SLOW,
    )


def by_end(hit: Hit) -> Hit:
    """A finding whose waiters wait for a measured end (``Hit.end``: a rank away from their collective, one not
    there, calls that went different ways, peers not joined) takes the verdict that end's state makes
    (``ends.end_verdict``): a proof of a hang where the end's state is itself one (stopped, diverged calls) or its
    fact proves it (a wait nothing can release, a loop with no way out, a timer past the collective's timeout), a
    proof of work where its fact proves work. The one verdict for the ranks' namers, on one node and across nodes
    (the merge of the nodes' summaries is judged here too)."""
    e, f = hit.end, hit.finding
    if e is None:
        return hit
    verdict, proven = end_verdict(e.state)
    if e.fact is not None and (proven or e.proves_hang):
        return Hit(replace(f, proof=proof.hang(e.fact)), Verdict.HUNG, e)
    if e.fact is not None and e.proves_work and verdict != Verdict.HUNG:
        return Hit(replace(f, proof=proof.work(e.fact)), verdict, e)
    return Hit(f, verdict, e)


def _alive_end(
    v: ProcessView, t: ThreadView | None, scene: Scene, graph: WaitGraph | None
) -> tuple[str, tuple[str, ...], Proof | None] | None:
    """What the wait of thread ``t`` of ``v`` leads to, where it is alive: its chain's end (a compiler it reads from,
    a holder asleep on a timer, the rest of the job that could open its FIFO), else, for the main thread, a process
    it started measured working (the work the wait may end with); for a main thread whose chain ends at the rest of
    the job (anyone may end its wait), that work first. A sentence of it, the facts in words, and the proof of work
    where one was measured; None where nothing it waits on is seen alive."""
    chain = _chain_of(graph, v, t)
    if chain is not None and chain.proves_hang:
        return None  # its own wait is proven hung: the work of another process does not end it
    if chain is not None and chain.ending in ALIVE_ENDINGS and not (chain.ending == "moves" and t is v.main_thread):
        return _alive_end_of(chain)
    if t is not v.main_thread:
        return None  # another thread's wait: only its own chain speaks for it
    found = _working_descendant(scene, v.pid)  # where anyone may end the wait ("moves"), the work is the better fact
    if found is None:
        return _alive_end_of(chain) if chain is not None and chain.ending == "moves" else None
    fact, proven = found
    return f"{fact}: the wait may end with that work", (fact,), proof.work(fact) if proven else None


def _alive_end_of(chain: Chain) -> tuple[str, tuple[str, ...], Proof | None]:
    """A chain's alive end in words, its facts, and its proof of work where it carries one."""
    kept = chain.proof if chain.proof is not None and chain.proof.kind == ProofKind.WORK else None
    is_ = STATE_WORDS.get(chain.ending, chain.ending)
    hops = " -> ".join(h.words for h in chain.hops)  # every hop: the wait followed may not be the one named
    return f"{hops}, and {chain.end.label} is {is_}: {chain.end.fact}", chain.lines(), kept


def _waited_on(graph: WaitGraph | None, v: ProcessView) -> bool:
    """Another process's chain goes through ``v`` (it holds what that one waits for)."""
    at = f"pid:{v.pid}"
    return graph is not None and any(at in {h.holder for h in c.hops} and c.waiter != at for c in graph.chains)


def _decisive(c: Chain) -> bool:
    """The chain says more than a polling waiter's own wake-ups: it ends alive, at an end that is itself proof (gone,
    stopped, a person, nobody, a cycle, a timer past the bounds) or at a holder whose own wait is proven (parked, a
    loop with no way out), whether or not a timeout on the way keeps it from proving the wait. A holder that has
    exited ends the wait, and says no more than the waiter's own loop, which may advance."""
    return (c.ending in ALIVE_ENDINGS and c.ending != "ended") or ENDINGS[c.ending][1] or c.end.proves_hang


def _chain_of(graph: WaitGraph | None, v: ProcessView, t: ThreadView | None = None) -> Chain | None:
    """The chain the graph followed from ``v``'s wait, if it waits; with ``t``, only where that wait is ``t``'s (a
    process's chain starts at the one of its waits that decides soonest, which may be another thread's)."""
    c = graph.chain_of(v.pid) if graph is not None else None
    if c is None or t is None:
        return c
    first = c.hops[0].tid
    return c if first == t.tid or (first is None and t is v.main_thread) else None


def _working_descendant(scene: Scene, pid: int) -> tuple[str, bool] | None:
    """The first process ``pid`` started (or one of theirs) that the state module reads as working, in words, and
    whether that work is proven (a proven one first: an evaluator at a CPU share on a loaded machine works with its
    stack moving, though its locals were not seen to advance)."""
    working = [(kid, m) for kid in scene.descendants(pid) if (m := process_state(kid)).state == "working"]
    best = min(working, key=lambda km: not km[1].proves_work, default=None)
    if best is None:
        return None
    kid, m = best
    return (m.fact if m.fact.startswith(kid.label()) else f"{kid.label()} works: {m.fact}"), m.proves_work


def work_elsewhere(hit: Hit, scene: Scene) -> Hit:
    """A hang named without proof while a process the waiter started (a child, a grandchild) is measured working, or
    while another thread of its own process that could release its thread-level wait (a lock, an event, a queue, a
    join) is, is not declared by the clock: the wait may end with that work (a parent in a network call while the
    evaluator it started computes, then answers; the exit's join of a listener whose stop event a flushing thread
    sets when it is done). It is slow, with the work as its proof where the state module proves it (bounded by
    --max-slow), else judged against the job's history; never by --min-stall."""
    f = hit.finding
    w = f.where
    if hit.verdict != Verdict.HUNG or f.proof is not None or w is None or w.pid is None:
        return hit
    found = _working_descendant(scene, w.pid)
    if found is not None:
        fact, proven = found
        said = f"Not proven hung: {fact}; the wait may end with that work."
        return _not_hung(f, said, (fact,), proof.work(fact) if proven else None)
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


def for_the_job(hit: Hit, graph: WaitGraph | None, scene: Scene) -> Hit:
    """A hang proven at a process the job started (a child, a worker of a pool), or at a thread of a job process (its
    main, a rank), while that job process, or a process between (``_acting``), has a thread, not the waiter (its
    chain's, where the proof is its chain's), that comes back to the user's code by itself within the bounds
    (``acts.acts_by_itself``: a future's ``result(timeout=...)``, a socket's timeout, a poll with a deadline, a Timer
    that kills), or where it, or a process its chain goes through, armed a timer that ends it, due within the bounds
    (``acts.ends_itself``: faulthandler's, the kernel's alarm): the job may end that wait and go on. Its proof is not
    the job's: hung without it, for the clock (--min-stall) to confirm."""
    f, w = hit.finding, hit.finding.where
    v = scene.view(w.pid) if hit.verdict == Verdict.HUNG and f.proves_hang and w and w.pid is not None else None
    if v is None or w is None or f.proof is None:
        return hit
    owners = _acting(scene, v)
    c = graph.chain_of(v.pid) if graph is not None and owners == [v] else None
    waiter = c.hops[0].tid if c is not None and c.hops and c.proof == f.proof else None  # (else the finding's thread)
    besides = (waiter or w.tid or v.pid) if owners == [v] else None
    ends = next((e for x in _on_chain(scene, graph, v, f.proof) if (e := ends_itself(x)) is not None), None)
    acts = ends or next((a for o in owners if (a := acts_by_itself(o, besides)) is not None), None)
    if acts is None:
        return hit
    said = f"not proven for the job: {acts}, and may then end this wait"
    summary = f"{f.summary.rstrip('.')}; {said}."
    return Hit(replace(f, proof=None, summary=summary, evidence=(*f.evidence, f.proof.fact, said)), Verdict.HUNG)


def _on_chain(scene: Scene, graph: WaitGraph | None, v: ProcessView, proven: object) -> list[ProcessView]:
    """``v`` and the processes its chain (the one whose proof is ``proven``) goes through while each wait is one a
    holder's exit ends (a child's, a pipe's: ``ENDED_BY_EXIT``; not a lock's, which its holder's death never
    releases), in order (a thread's node is its process's)."""
    c = graph.chain_of(v.pid) if graph is not None else None
    pids = [v.pid]
    for e in c.hops if c is not None and c.proof == proven else ():
        if (holder := node_pid(e.holder)) is None or e.resource not in ENDED_BY_EXIT:
            break
        pids.append(holder)
    return [x for p in dict.fromkeys(pids) if (x := scene.view(p)) is not None]


def _acting(scene: Scene, v: ProcessView) -> list[ProcessView]:
    """The processes whose threads may end a wait of ``v``'s: ``v`` itself, where it is a job process (a thread of it
    waits: asyncio's child watcher, a helper); else each process above it, to the job process (a pool worker's Timer
    may end the process it started, as its main process may)."""
    if v.role in OWN_ROLES:
        return [v]
    out, o = [], scene.view(v.info.ppid)
    while o is not None and o not in out:
        out.append(o)
        o = scene.view(o.info.ppid) if o.role not in OWN_ROLES else None
    return out


def follow_chain(hit: Hit, graph: WaitGraph, scene: Scene) -> Hit:
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
    t = next((x for x in v.threads if x.tid == f.where.tid), v.main_thread) if v is not None else None
    own = _chain_of(graph, v, t) if v is not None else None
    if own is not None and own.ending == NOBODY and own.proof is not None and f.proof is None and not _timed(graph, at):
        # no living thread can release what it waits on: no work of its process (main training) ends that wait
        return Hit(replace(f, proof=own.proof, evidence=(*f.evidence, *own.lines())), hit.verdict)
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
    if proven is not None:  # a ring the namer's one hop cannot tell: the summary says it
        ring = proven.ending == "cycle" and not _says_ring(f.summary)
        said = f.summary.rstrip(".") + f"; {proven.ending_text}." if ring else f.summary
        return Hit(replace(f, summary=said, proof=proven.proof, evidence=(*f.evidence, *proven.lines())), hit.verdict)
    own = next((c for c in graph.chains if c.waiter == at), None)
    if own is not None and (
        own.ending in ALIVE_ENDINGS or (own.ending in ("unknown", "brief") and not own.end.measured)
    ):
        # The rule's hang stands on its own reading of the holder; the chain, followed hop by hop (a compiler
        # waiting in wait4 for its child), ends at a holder whose exit ends the wait, or one seen too briefly to
        # say what it does: no hang is measured, so none is said, and the finding ranks below the others.
        return _not_hung(f, "Not proven hung: " + own.ending_text + ".", own.lines())
    return hit


# A summary's places, code and names: `(ring_cycle.py:3)`, a thread 'deadlock-watchdog', `Recycler.step` say no ring
PLACES = re.compile(r"\([^()]*:\d+\)|`[^`]*`|'[^']*'|\b\w+(?:\.\w+)+")  # (\b: linear, no possessive for 3.10)


def _says_ring(summary: str) -> bool:
    """A namer's summary already says the ring (a cycle, a deadlock, each waiting), in its words, not its places."""
    said = PLACES.sub("", summary)
    return any(w in said for w in ("a cycle", "a deadlock", "each wait"))


def _timed(graph: WaitGraph, at: str) -> bool:
    """Another process waits for ``at`` to exit with a timeout (``Popen.wait(timeout=...)``, ``join(timeout)``), or
    for a batch of it with the loader's (``DataLoader(timeout=...)``): when it runs out, that process may end ``at``
    or skip the batch and go on, so ``at``'s own chain, proven, does not prove the job hung (only the chain through
    that timed wait speaks for the job, and a timed wait never proves)."""
    timed = ("child", "dataloader batch")
    return any(e.holder == at and e.resource in timed and e.timeout is True for e in graph.edges)


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
        if c.proves_hang
        and c.verdict == Verdict.HUNG
        and at in {c.waiter, c.end.id, *(h.holder for h in c.hops)}
        and not _timed(graph, c.waiter)
    ]
    return min(proven, key=lambda c: c.waiter != at, default=None)


# An alive cause whose hang, once proven, has a name of its own.
HUNG_CAUSE = {
    Cause.DATALOADER_WORKER_SLOW: Cause.DATALOADER_WORKER_STUCK,
    Cause.DISTRIBUTED_STRAGGLER: Cause.DISTRIBUTED_PEER_STUCK,
}


# The job's own processes, whose loop advancing is the job's progress (a worker's or a child's is only the work the
# job waits for, as ``state.computes`` says).
OWN_ROLES = frozenset({Role.MAIN, Role.RANK})

CONTRADICTED = 0.4  # the most a finding whose hang its own chain does not bear out keeps


# The waits on a primitive (a thread's, or one shared between processes) that a chain may end at nobody for
OWN_KINDS = frozenset(
    {"lock", "event", "condition", "semaphore", "queue", proof.QUEUE_TASKS, "join", "barrier", "future"}
)


def _asleep_fix(v: ProcessView | None) -> tuple[str, ...]:
    """Every thread of ``v`` asleep: a ring's fix, or an import-time thread's where one waits on a module's import
    lock (a thread that imports a module another of them is importing)."""
    waits = v is not None and any(proof.sync_wait(o) == proof.IMPORT_LOCK for o in v.threads)
    joins = v is not None and any(  # (another thread imports a module and waits at its top level: a join, a result)
        (proof.sync_wait(o) == "join" or proof.waits_on_future(o)) and any(f.file == proof.IMPORTLIB for f in o.frames)
        for o in v.threads
    )
    return IMPORT_LOCK_FIX if waits and joins else ALL_ASLEEP_FIX


def _nobody_fix(resource: str) -> tuple[str, ...]:
    """What to do where no living thread can end a wait on a primitive of its own: a lock's, whoever took it keeps it;
    an event's or a queue's, the thread that should set or fill it is gone."""
    return LOCK_KEPT_FIX + DEADLOCK_FIX[1:] if resource == "lock" else WAIT_FOREVER_FIX


def unnamed(hits: list[Hit], graph: WaitGraph, scene: Scene) -> list[Hit]:
    """A chain the graph proves hung that no finding carries is hung all the same: one finding per such chain,
    with a generic cause (``code.deadlock`` for a cycle within one process, ``process.waits_on`` otherwise),
    at the first waiter's own line (where that has no frame of the user's, or holds up a thread holding the GIL, at
    the line of the thread it waits on), in the chain's words. A namer that knows the shape names it better."""
    covered = {f"pid:{h.finding.where.pid}" for h in hits if h.finding.proves_hang and h.finding.where is not None}
    out: list[Hit] = []
    # a cycle is named from one of its own members (the ranks that send to each other), not from a process
    # that only waits on it (their launcher, joining them)
    for c in sorted(graph.chains, key=lambda c: not (c.ending == "cycle" and c.waiter == c.end.id)):
        if c.verdict != Verdict.HUNG or not c.proves_hang or _timed(graph, c.waiter):
            continue
        members = {c.waiter, *(h.holder for h in c.hops)}
        if members & covered:
            continue
        covered |= members
        v = scene.view(int(c.waiter.split(":", 1)[1]))
        t = v.main_thread if v is not None else None
        frame = innermost_explaining(t.frames) if t is not None else None
        pids = {m for m in members if m.startswith("pid:")}
        # every thread of the process is blocked: a ring inside it, or a wait on itself
        asleep = c.end.label == ALL_ASLEEP
        cause = Cause.CODE_DEADLOCK if (c.ending == "cycle" and len(pids) == 1) or asleep else Cause.PROCESS_WAITS_ON
        summary, fix = f"{c.hops[0].words}: {c.ending_text}.", cause.info.fix
        fix = PIDFD_WAIT_FIX if c.hops[0].resource == "pidfd" else fix  # (a process's exit, not a pipe's writer)
        if c.ending == "cycle" and len(c.hops) > 1:  # a ring: every hop said, and how to break it
            hops = [h.words for h in c.hops]
            summary = f"{hops[0]}" + "".join(f", while {w}" for w in hops[1:]) + f": {c.ending_text}."
            full = any(h.resource in ("pipe_full", "socket_full") for h in c.hops)
            fix = CYCLE_FIX + (FULL_BUFFER_FIX if full else ())
        hop = c.hops[0]  # one hop to itself, or for a signal (to nobody: a child's would not be proven)
        if len(c.hops) == 1 and (hop.holder == c.waiter or hop.resource == "signal") and hop.resource in SELF_WAIT_FIX:
            fix = SELF_WAIT_FIX[hop.resource]  # it waits on itself (or for a signal): no lock order to fix
            if hop.resource != "signal" and v is not None and proof.others_waiting(v, hop.tid or v.pid):
                fix = OTHERS_WAIT_FIX + (fix if hop.resource in ("pipe", "pipe_full") else ())  # (a thread could)
            summary = f"{c.end.fact} (hung)." if hop.resource == "signal" else summary  # nobody holds a signal
            if t is not None and t.last.timeout is True and t.last.wakes_in is not None:  # a timeout past the bounds
                fix = fix + LATE_TIMER_FIX
        if c.hops[-1].resource in OWN_KINDS and c.ending in (NOBODY, "long_sleep"):  # a primitive's, not a pipe's
            fix = (
                _asleep_fix(v) if asleep else _nobody_fix(c.hops[-1].resource) if c.ending == NOBODY else LONG_SLEEP_FIX
            )
        if all(h.resource in RANK_RESOURCES for h in c.hops):  # ranks that wait on one another
            cause, fix = Cause.DISTRIBUTED_PEER_STUCK, P2P_FIX
            if any(TAGS_DIFFER in h.words for h in c.hops):  # the tags read differ
                fix = P2P_TAG_FIX + P2P_FIX[1:]
            if any(h.resource == SETUP for h in c.hops):  # a group's making: its members never meet
                fix = GROUP_FIX
            summary = _p2p_summary(c)
        where = v.where(t, frame) if v is not None and frame is not None else None
        o = next((o for o in v.threads if thread_id(v.pid, o.tid) == hop.holder), None) if v is not None else None
        if o is not None and (hop.resource == "gil" or t is None or innermost_user(t.frames) is None):
            # the place is the holder thread's (the call that holds the GIL; the loop the exit joins), where the
            # waiter's own frames are none of the user's
            call = innermost_explaining(o.frames)
            where = v.where(o, call) if v is not None and call is not None else where
            fix = HOLDER_THREAD_FIX.get(hop.resource, fix)
        elif hop.resource == "gil":
            fix = GIL_FIX
        if where is not None and v is not None and v.info.rank is not None:
            where = replace(where, rank=v.info.rank)
        out.append(
            Hit(
                Finding(cause, 0.7, summary, where, c.lines(), fix, proof=c.proof),
                Verdict.HUNG,
            )
        )
    return out


# A wait on one thread of the waiter's own process: one holding the GIL in a native call, one the exit joins
HOLDER_THREAD_FIX = {"gil": GIL_FIX, "join": EXIT_JOIN_FIX}


def _p2p_summary(c: Chain) -> str:
    """A chain of point-to-point calls in words: each hop, and what the ending makes them."""
    hops = [h.words for h in c.hops]
    said = hops[0][:1].upper() + hops[0][1:] + "".join(f", while {w}" for w in hops[1:])
    if c.ending == "cycle" and len(c.hops) == 2 and all(h.resource in P2P_WORDS for h in c.hops):
        return f"{said}: each waits for the other to post the matching call, so none ever completes (hung)."
    if c.ending == "cycle" and all(NAMES_DIFFER in h.words for h in c.hops):
        return f"{said}: each waits for the others under a name of its own, so they never meet (hung)."
    if c.ending == "cycle":
        return f"{said}: each waits for the next, so none ever completes (hung)."
    return f"{said}: {c.ending_text}."


ENDING_TEXT_WORKING = "the wait ends when its work does (waiting, bounded by --max-slow)."
