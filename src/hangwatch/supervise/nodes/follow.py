"""A node that follows another node's decision to end the job: before it ends its own part, its own incident. The
loop's short look at its part, merged with every node's summary (the decider's finding), written with the decision
in it. Nothing is ended on any node without an incident on that node."""

from __future__ import annotations

import dataclasses

from hangwatch.records.run import Decision, EventKind, OnHang
from hangwatch.supervise.attempt import Attempt
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.stall.look import Look, Unseen
from hangwatch.supervise.stall.recording import Recorder

FOLLOW_WINDOW_S = 1.0  # the look a node takes of its own part before it follows another node's decision


class Follower:
    """Writes this node's incident for another node's decision."""

    def __init__(self, ctx: RunContext, recorder: Recorder) -> None:
        self.ctx, self.recorder = ctx, recorder

    def window(self) -> float:
        """The look's length: FOLLOW_WINDOW_S, or a shorter --capture-window."""
        asked = self.ctx.cfg.capture_window
        return min(asked, FOLLOW_WINDOW_S) if asked is not None else FOLLOW_WINDOW_S

    def record(self, a: Attempt, called: Decision, restart: bool, seen: Look | Unseen) -> None:
        """The incident of ``called`` on this node, from the loop's look (``seen``; nothing is written where the
        job ended or could not be read: the decision and why are in events.jsonl). ``restart``: what this node's
        restart policy made of the decision."""
        from hangwatch.diagnose import Diagnosis
        from hangwatch.records.incident import Action, Finding, Verdict

        if isinstance(seen, Unseen):
            return
        ctx, evidence, diagnosis = self.ctx, seen.evidence, seen.diagnosis
        merged_cause = None
        if ctx.nodes is not None:
            merged = ctx.nodes.merge(a.number, evidence, diagnosis, FOLLOW_WINDOW_S, ctx.clock.now())
            ctx.rundir.event(EventKind.NODES, attempt=a.number, reported=list(merged.reported), merged=merged.cause)
            diagnosis, merged_cause = merged.diagnosis, merged.cause
        late = ctx.nodes is not None and merged_cause != called.cause  # read only when this look missed it
        seen_there = ctx.nodes.finding_of(a.number, called.by) if late and ctx.nodes is not None else None
        if seen_there is not None:
            # This look came too late or from too far to see what the decider saw (its ranks may already fail
            # in their collectives): the decider's root leads, this node's own findings follow it.
            try:
                decided = Finding.from_dict(seen_there)
            except (KeyError, TypeError, ValueError):  # another version's finding: the decision still says why
                decided = None
            if decided is not None:
                diagnosis = Diagnosis(diagnosis.verdict, (decided, *diagnosis.findings))
        root = diagnosis.root
        said = f"node {called.by} decided to {OnHang(called.action).value} the job: {called.why or called.cause}"
        root = dataclasses.replace(root, evidence=(*root.evidence, said))
        now = ctx.clock.now()
        self.recorder.capture(
            evidence,
            Diagnosis(Verdict.HUNG if called.code is not None else diagnosis.verdict, (root, *diagnosis.findings[1:])),
            attempt=a.number,
            action=Action.RESTARTED if restart else Action.KILLED,
            detector=a.detector,
            detected_at=now,
            stalled=a.detector.stalled_for(now),
        )
