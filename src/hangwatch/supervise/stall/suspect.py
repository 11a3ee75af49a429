"""A suspect job: captured and diagnosed, then given more time when it is alive (bounded by its own
history or --max-slow), held while it waits for peers (bounded by --rendezvous-timeout), or declared hung
(``stall/act.py``). Movement seen while it was captured means it is not hung. Each judgement is returned to
the run loop as an outcome (``Extend``, ``Hold``, ``Report``, ``Declare``); the loop applies it."""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

from hangwatch.causes import PHASE_CAUSES, Cause
from hangwatch.records.layout import command_name
from hangwatch.records.run import EventKind
from hangwatch.supervise.attempt import Attempt, Declare, Extend, Hold, LookAt, Outcome, Report
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.progress.detector import HistoryBound, StallDetector, State
from hangwatch.supervise.stall.capturing import Capturer
from hangwatch.supervise.stall.judgement import Judgement, someone_could_end
from hangwatch.supervise.stall.look import Look, Unseen

if TYPE_CHECKING:
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.evidence import Evidence
    from hangwatch.records.incident import Finding

SLOW_INCIDENT_STALLS = 3  # extended past this many x --min-stall: a `slow` incident, once per cause and place
SLOW_REPEAT_S = 600.0  # while it lasts, a note (event, line, notification) at most this often after that incident
EARLY_WINDOW_S = 2.0  # the first look samples this long (its proofs stand on kernel facts more than on time)


def alive_bound(det: StallDetector, evidence: Evidence, root: Finding) -> HistoryBound | None:
    """When an alive job without progress becomes hung by its own history; None: only --max-slow bounds it.

    Proven work (a loop walking its data, one long call, bytes moving: ``root.proves_work``) is never judged
    by the step history; a phase it has been in before keeps its phase bound. Compiles, long GPU kernels,
    buffered output and moving I/O get --max-slow alone. What shows no work (a thread that only wakes, an
    idle process) is bounded by the history."""
    from hangwatch.diagnose.bounds import bounded_by_history, workers_behind

    if not bounded_by_history(root):
        return None
    if root.proves_work:
        return det.phase_bound()
    return det.history_bound(workers_behind(evidence, root))


def wall_clock_text(at: float) -> str:
    """A unix time as the local wall clock, for 'hung at 14:20:05'."""
    return time.strftime("%H:%M:%S", time.localtime(at))


class SuspectJudge:
    """Judges suspect attempts."""

    def __init__(self, ctx: RunContext, capturer: Capturer) -> None:
        self.ctx, self.capturer = ctx, capturer

    def on_suspect(self, a: Attempt, now: float) -> Outcome:
        """suspect: capture and diagnose; extend a job that is alive, else declare it hung."""
        ctx, det = self.ctx, a.detector
        stalled = det.stalled_for(now)
        ctx.rundir.event(
            EventKind.SUSPECT,
            attempt=a.number,
            stalled_seconds=round(stalled, 1),
            threshold=round(det.threshold(), 1),
            phase=det.phase_name,
        )
        if now < a.suspicion.capture_retry_at:
            return None
        return LookAt(None, functools.partial(self._suspect_seen, a, now, stalled))

    def _suspect_seen(self, a: Attempt, now: float, stalled: float, seen: Look | Unseen) -> Outcome:
        """The suspect's look, taken: alive (extended), waiting for peers, or hung."""
        ctx, det = self.ctx, a.detector
        if isinstance(seen, Unseen):
            if seen.error is not None:  # retried later, not every round (or the job is gone: the next round sees it)
                a.suspicion.capture_retry_at = ctx.clock.now() + max(1.0, self.capturer.window())
            return None
        evidence, diagnosis, moved = seen.evidence, seen.diagnosis, seen.moved
        if ctx.nodes is not None and a.node.captured_for_peer:  # answer the node that asked, alive or not
            ctx.nodes.share(a.number, evidence, diagnosis, ctx.clock.now(), request=False)
        at = ctx.clock.now()
        if moved is not None and (det.state != State.SUSPECT or det.may_extend(at)):
            # Visible movement between suspect and decision: not hung. Output alone extends, within --max-slow.
            ctx.rundir.event(
                EventKind.EXTENDED,
                attempt=a.number,
                verdict=diagnosis.verdict.value,
                cause=diagnosis.root.cause,
                reason=moved,
                seconds=round(det.threshold(), 1),
            )
            ctx.say(
                f"hangwatch: no progress for {stalled:.0f} s, but the job moved while it was captured "
                f"({moved}); not hung."
            )
            return Extend(at) if det.state == State.SUSPECT else None
        from hangwatch.records.incident import Verdict

        if ctx.nodes is not None:
            merged = ctx.nodes.merge(a.number, evidence, diagnosis, self.capturer.window(), ctx.clock.now())
            ctx.rundir.event(EventKind.NODES, attempt=a.number, reported=list(merged.reported), merged=merged.cause)
            diagnosis = merged.diagnosis
        diagnosis = self._same_work(a, diagnosis)
        root = diagnosis.root
        if diagnosis.verdict == Verdict.WAITING and root.cause == Cause.DISTRIBUTED_RENDEZVOUS_WAIT:
            return self.peers_late(Judgement(a, evidence, diagnosis, now, stalled))
        unproven = ctx.cfg.blind and not root.proves_hang  # no progress to read: only proof is acted on
        if diagnosis.verdict in (Verdict.SLOW, Verdict.PROGRESSING, Verdict.WAITING) or unproven:
            from hangwatch.diagnose.bounds import past_history

            bound = alive_bound(det, evidence, root)
            at = ctx.clock.now()
            if det.may_extend(at, bound):
                report = self._alive(Judgement(a, evidence, diagnosis, now, stalled), bound, at)
                return Extend(at, bound, report)
            by_history = bound is not None and ctx.clock.now() >= bound.at
            basis = bound.basis if by_history and bound is not None else f"--max-slow {ctx.cfg.max_slow:.0f} s"
            stalled = det.stalled_for(ctx.clock.now())  # the capture took its window: the stall as decided
            diagnosis = past_history(diagnosis, stalled, basis, by_history)
        return Declare(Judgement(a, evidence, diagnosis, now, stalled))

    def _same_work(self, a: Attempt, diagnosis: Diagnosis) -> Diagnosis:
        """Work proven earlier in this stall stands while a later capture at the same place proves nothing either
        way: a busy loop with no locals whose stack moved between lines in one capture may sit on one line in all
        of the next one's few samples (a coin flip per sample); a compile proven at work at a line, caught in the
        next capture in a disk write of a loaded machine (D, a storage wait, unproven) at that line. What it was
        proven doing earlier is said, and --max-slow bounds it, not --min-stall."""
        root, det = diagnosis.root, a.detector
        stall = det.last.at if det.last is not None else det.started_at
        if root.where is None:
            return diagnosis
        key = f"{root.where.file}:{root.where.function}"  # (the place, whatever the cause named there)
        if root.proves_work and root.proof is not None:
            a.suspicion.worked[key] = (stall, root.proof.fact, root.cause)
            return diagnosis
        earlier = a.suspicion.worked.get(key)
        if root.proof is not None or earlier is None or earlier[0] != stall:
            return diagnosis
        from hangwatch.diagnose.engine import worked_before

        return worked_before(diagnosis, earlier[1])

    def look_due(self, a: Attempt, now: float) -> bool:
        """Whether a progressing job that has stalled is due its first look (once per stall), sooner than
        --min-stall: max(15 s, 10 x its 99th-percentile progress interval) after its last progress."""
        det = a.detector
        after = det.look_after()
        return (
            after is not None
            and det.last is not None
            and a.suspicion.looked_at != det.last.at
            and now >= det.last.at + after
        )

    def look(self, a: Attempt, now: float, still: bool = False) -> Outcome:
        """The first look at a stall: a short capture that declares the job hung only on a proof of a hang
        (a wait nothing will release, a lock cycle, a counting spin, a prompt, ...); anything else waits for
        --min-stall, as before. ``still``: a look the kernel's view of a still job called for, sooner; the
        stall's own first look still comes when it is due."""
        det = a.detector
        if not still:
            a.suspicion.looked_at = det.last.at if det.last is not None else now
        stalled = det.stalled_for(now)
        window = min(self.capturer.window(), EARLY_WINDOW_S)
        return LookAt(window, functools.partial(self._early_seen, a, now, stalled, still))

    def _early_seen(self, a: Attempt, now: float, stalled: float, still: bool, seen: Look | Unseen) -> Outcome:
        """The first look, taken: declared hung on a proof of a hang, else nothing changes."""
        ctx, det = self.ctx, a.detector
        if isinstance(seen, Unseen):
            return None
        evidence, diagnosis, moved = seen.evidence, seen.diagnosis, seen.moved
        root = diagnosis.root
        from hangwatch.records.incident import Verdict

        decides = moved is None and diagnosis.verdict in (Verdict.HUNG, Verdict.STOPPED) and root.proves_hang
        decides = decides and not (still and someone_could_end(diagnosis))
        ctx.rundir.event(
            EventKind.LOOK,
            attempt=a.number,
            stalled_seconds=round(stalled, 1),
            verdict=diagnosis.verdict.value,
            cause=root.cause,
            hung=decides,
            proof=root.proof.fact if root.proof is not None else None,
            moved=moved,
            trigger="still" if still else "clock",
        )
        if not decides or det.state != State.PROGRESSING:
            return None
        fact = root.proof.fact if root.proof is not None else ""
        ctx.say(f"hangwatch: no progress for {stalled:.0f} s, and it is proven hung: {fact}.")
        return Declare(Judgement(a, evidence, diagnosis, now, stalled))

    def _alive(self, j: Judgement, bound: HistoryBound | None, at: float) -> Report | None:
        """Alive without progress: more time from ``at``, said plainly with when it ends; past 3 x --min-stall
        the first time for this cause and place, a `slow` incident (notified) says what it does and until when
        (the report returned); said again while it lasts, at most every SLOW_REPEAT_S."""
        from hangwatch.records.incident import Verdict

        a, diagnosis, stalled = j.attempt, j.diagnosis, j.stalled
        ctx, det, root = self.ctx, a.detector, diagnosis.root
        when, basis, hung_at = self._until(j, bound, at)
        ctx.rundir.event(
            EventKind.EXTENDED,
            attempt=a.number,
            verdict=diagnosis.verdict.value,
            cause=root.cause,
            seconds=round(det.threshold(), 1),
            summary=root.summary,
            hung_at=hung_at,
            bound=basis,
        )
        alive = "the job is alive" if diagnosis.verdict != Verdict.HUNG else "it is not proven hung"
        ctx.say(
            f"hangwatch: no progress for {stalled:.0f} s, but {alive}: {root.summary} "
            f"Giving it {det.threshold():.0f} s more; {when} ({basis})."
        )
        a.suspicion.note = f"{diagnosis.verdict.value}: {root.cause} for {stalled:.0f} s; {when}"
        key = (root.cause, f"{root.where.file}:{root.where.function}" if root.where else "")
        # as if the hook had declared it: silent until its deadline (so is a look at its place that proves nothing
        # more: a compile's disk write, ``_same_work``)
        earlier = a.suspicion.worked.get(key[1]) if root.where is not None else None
        stall = det.last.at if det.last is not None else det.started_at
        phase_before = earlier is not None and earlier[0] == stall and earlier[2] in PHASE_CAUSES
        in_a_phase = root.cause in PHASE_CAUSES or phase_before
        if (
            stalled > SLOW_INCIDENT_STALLS * ctx.cfg.min_stall
            and key not in a.suspicion.slow_reported
            and not in_a_phase
            and not ctx.cfg.blind  # no progress can be read: a time without it says nothing of the job
        ):
            a.suspicion.slow_reported.add(key)
            a.suspicion.slow_noted_at = j.now
            from hangwatch.diagnose.bounds import unseen_progress

            diagnosis = unseen_progress(diagnosis)
            return Report(
                j.revised(diagnosis), f"no progress for {stalled:.0f} s; {when}, by this job's bound: {basis}"
            )
        noted = a.suspicion.slow_noted_at
        if key in a.suspicion.slow_reported and noted is not None and j.now - noted >= SLOW_REPEAT_S:
            self._still_slow(j, when, hung_at)
        return None

    def _until(self, j: Judgement, bound: HistoryBound | None, at: float) -> tuple[str, str, float | None]:
        """When an alive job without progress is hung unless it progresses (in words), on what bound, and the
        time (None: no clock ends it, an attached job's)."""
        ctx, det = self.ctx, j.attempt.detector
        until = det.max_slow_at(at)  # --max-slow holds in any case
        if bound is not None:
            until = min(until, bound.at)
        if ctx.cfg.blind and bound is None:
            return "never hung by a clock", "its progress cannot be read, so only a proven hang is acted on", None
        when = f"hung at {wall_clock_text(until)} ({until - j.now:.0f} s from now) unless it progresses"
        basis = bound.basis if bound is not None else f"--max-slow {ctx.cfg.max_slow:.0f} s"
        return when, basis, round(until, 1)

    def _still_slow(self, j: Judgement, when: str, hung_at: float | None) -> None:
        """A `slow` job that lasts: said again (a `still_slow` event, a line, a notification)."""
        ctx, a, diagnosis = self.ctx, j.attempt, j.diagnosis
        root, stalled = diagnosis.root, j.stalled
        a.suspicion.slow_noted_at = j.now  # at most every SLOW_REPEAT_S
        text = f"still {diagnosis.verdict.value} after {stalled / 60:.0f} min without progress: {root.summary} {when}."
        ctx.rundir.event(
            EventKind.STILL_SLOW,
            attempt=a.number,
            cause=root.cause,
            stalled_seconds=round(stalled, 1),
            hung_at=hung_at,
            summary=root.summary,
        )
        ctx.say(f"hangwatch: {text}")
        ctx.notifier.send(f"hangwatch: {command_name(ctx.cfg.argv)} still {diagnosis.verdict.value}", text)

    def peers_late(self, j: Judgement) -> Outcome:
        """Waiting for peers at process-group setup: `waiting` (reported once, after --min-stall) until
        --rendezvous-timeout, then hung. Other nodes may start late; a node that never comes is a hang."""
        a, diagnosis, now, stalled = j.attempt, j.diagnosis, j.now, j.stalled
        ctx, det, timeout = self.ctx, a.detector, self.ctx.cfg.rendezvous_timeout
        if a.suspicion.waiting_since is None:  # first seen waiting now: it may have begun since the last progress
            a.suspicion.waiting_since = max(a.started_at, now - stalled) if det.last is not None else now
        waited = now - a.suspicion.waiting_since
        until = a.suspicion.waiting_since + timeout
        from hangwatch.diagnose.bounds import past_rendezvous_timeout

        if waited >= timeout:
            return Declare(j.revised(past_rendezvous_timeout(diagnosis, waited, timeout), waited))
        when = f"hung at {wall_clock_text(until)} ({until - now:.0f} s from now) if the peers have not joined"
        a.suspicion.note = f"waiting for peers for {waited:.0f} s; {when}"
        report = None
        if not a.suspicion.waiting_reported and waited >= ctx.cfg.min_stall:
            a.suspicion.waiting_reported = True
            report = Report(
                j.revised(stalled=waited), f"waiting for {waited:.0f} s; {when} (--rendezvous-timeout {timeout:.0f} s)"
            )
        if det.state == State.SUSPECT:
            return Hold(min(until, now + det.threshold()), report)
        return report
