"""Run every rule over the evidence, rank the findings, decide the verdict."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace

from hangwatch.causes import Cause
from hangwatch.diagnose import proof
from hangwatch.diagnose.code import busy_loop_rule, deadlock_rule, exit_wait_rule
from hangwatch.diagnose.collectives import flight_rule
from hangwatch.diagnose.compile import compile_rule
from hangwatch.diagnose.dataloader import dataloader_rule, fork_rule, shutdown_rule
from hangwatch.diagnose.distributed import distributed_rule
from hangwatch.diagnose.gpu import annotate, gpu_activity_rule, kernel_rule
from hangwatch.diagnose.graph import ENDING_TEXT, WaitGraph, build_graph
from hangwatch.diagnose.io import network_wait_rule, storage_wait_rule
from hangwatch.diagnose.lost import lost_work_rule
from hangwatch.diagnose.native import native_fork_rule
from hangwatch.diagnose.output import output_buffered_rule
from hangwatch.diagnose.process import child_wait_rule, input_wait_rule, stopped_rule
from hangwatch.diagnose.scene import Hit, Rule, Scene
from hangwatch.diagnose.views import IDLE_CPU_PERCENT, ProcessView, describe, innermost_explaining
from hangwatch.diagnose.waits import lock_wait_rule
from hangwatch.records.evidence import Evidence, Role
from hangwatch.records.incident import Finding, Verdict
from hangwatch.signatures import SLEEP_LINE, UNKNOWN_FIX

log = logging.getLogger(__name__)
IO_ACTIVE_BYTES = 1024 * 1024  # storage I/O in the window above which a quiet job is "slow", not hung

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
    if graph is not None:
        hits = [_follow_chain(h, graph) for h in hits]
    hits = rank(hits)
    if hits:
        verdict, findings = hits[0].verdict, tuple(h.finding for h in hits)
    else:
        verdict, findings = _verdict_from_activity(scene), (_unknown(scene),)
    return Diagnosis(verdict, annotate(findings, verdict, scene), graph)


def _place(h: Hit) -> tuple[str, int] | None:
    w = h.finding.where
    return (w.file, w.line) if w is not None and w.file and w.line is not None else None


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


def _follow_chain(hit: Hit, graph: WaitGraph) -> Hit:
    """The verdict follows the chain. Proof of work is never killed: a hang a rule names without proof, at a
    waiter whose chain ends in proven work, or at the working process at its end, is that waiter waiting for
    work (bounded by --max-slow). And a hang a rule names without proof, at a process on a chain the graph proves (a
    cycle, a holder gone, stopped or parked, a loop with no way out), carries that chain's proof."""
    f = hit.finding
    if hit.verdict != Verdict.HUNG or f.proves_hang or f.where is None:
        return hit
    at = f"pid:{f.where.pid}"
    chain = next((c for c in graph.chains if c.ending == "working" and at in (c.end.id, c.waiter)), None)
    if chain is not None and chain.proof is not None:
        return Hit(
            replace(
                f,
                proof=chain.proof,
                evidence=(*f.evidence, *chain.lines()),
                summary=f.summary + " It works, though: " + ENDING_TEXT_WORKING,
                confidence=min(f.confidence, CONTRADICTED),
            ),
            Verdict.SLOW,
        )
    if f.proof is not None:  # a rule's own proof of work stands
        return hit
    proven = next(
        (
            c
            for c in graph.chains
            if c.proof is not None
            and c.verdict == Verdict.HUNG
            and at in {c.waiter, c.end.id, *(h.holder for h in c.hops)}
        ),
        None,
    )
    if proven is not None:
        return Hit(replace(f, proof=proven.proof, evidence=(*f.evidence, *proven.lines())), hit.verdict)
    own = next((c for c in graph.chains if c.waiter == at), None)
    if own is not None and (own.ending == "ended" or (own.ending == "unknown" and not own.end.measured)):
        # The rule's hang stands on its own reading of the holder; the chain, followed hop by hop (a compiler
        # waiting in wait4 for its child), ends at a holder whose exit ends the wait, or one seen too briefly to
        # say what it does: no hang is measured, so none is said, and the finding ranks below the others.
        return Hit(
            replace(
                f,
                summary=f.summary + " Not proven hung: " + ENDING_TEXT[own.ending] + ".",
                evidence=(*f.evidence, *own.lines()),
                confidence=min(f.confidence, CONTRADICTED),
            ),
            Verdict.SLOW,
        )
    return hit


CONTRADICTED = 0.4  # the most a finding whose hang its own chain does not bear out keeps
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
    scene = Scene.of(ev)
    for v in scene.views:  # every process, whatever its role: a wget child counts as much as main
        if (v.cpu_percent or 0.0) > IDLE_CPU_PERCENT:
            return f"{v.label()} used {v.cpu_text()}"
        if v.moved_data or (v.delta("write_bytes") or 0) + (v.delta("read_bytes") or 0) > 0:
            return f"{v.label()} moved data"
        if v.stdout_grew or (v.role != Role.LAUNCHER and any(t.woke_often for t in v.threads if t.has_stack)):
            return f"{v.label()} woke up or wrote output"  # torchrun's agent wakes to poll its ranks: not work
        for t in v.threads if v.role != Role.LAUNCHER else ():  # torchrun's agent sleeps between its polls
            top = t.frames[0] if t.frames else None  # time.sleep is C: its caller's line, in any file
            if top is not None and SLEEP_LINE.search(top.code or ""):
                return f"{v.label()} sleeps at {describe(top)}: a timer will wake it"
    return None


def _verdict_from_activity(scene: Scene) -> Verdict:
    """Without a named cause the samples decide: anything moving means the job is not hung."""
    for v in scene.views:
        if v.stdout_grew:
            return Verdict.PROGRESSING
        t = v.main_thread
        if (
            v.role in (Role.MAIN, Role.RANK)
            and t is not None
            and t.stack_changed
            and ((v.cpu_percent or 0.0) > IDLE_CPU_PERCENT)
        ):
            return Verdict.PROGRESSING
    if any((v.cpu_percent or 0.0) > IDLE_CPU_PERCENT for v in scene.views):
        return Verdict.SLOW
    if any(
        v.role in (Role.MAIN, Role.RANK) and (v.moved_data or any(t.woke_often for t in v.threads if t.has_stack))
        for v in scene.views
    ):
        return Verdict.SLOW  # waking again and again (a retry or poll loop), or moving data: alive
    if any((v.delta("write_bytes") or 0) + (v.delta("read_bytes") or 0) > IO_ACTIVE_BYTES for v in scene.views):
        return Verdict.SLOW  # e.g. a checkpoint written to slow storage: moving, only slowly
    if any(v.work is not None for v in scene.views):
        return Verdict.SLOW  # bytes moving in any process of the job (a thread of it reading a slow disk)
    return Verdict.HUNG


def _unknown(scene: Scene) -> Finding:
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
    return Finding(
        cause=Cause.UNKNOWN,
        confidence=0.1,
        summary=f"No known hang pattern matched; {v.label()} is in {describe(frame)}.",
        where=v.where(t, frame) if frame else None,
        evidence=tuple(ev),
        fix=UNKNOWN_FIX,
        proof=proof.work(works) if works is not None else None,
    )
