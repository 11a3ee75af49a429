"""What happens when a job is declared hung, or crashes: one decision (with the other nodes), the
incident on disk and announced before anything is done (evidence before action), then the act: report,
kill, restart with the remedy the cause names (stall/remedies.py), or heal in place (stall/healing.py). The exit
the run ends with follows the exit-code contract (recover/exitcode.py).
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hangwatch.capture.cgroup import cgroup_oom_kills
from hangwatch.records.run import EventKind, OnHang
from hangwatch.recover.exitcode import ExitReason, ExitStatus, Hang
from hangwatch.supervise.attempt import Attempt, AttemptEnd, EndJob, Outcome
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.stall.capturing import Capturer
from hangwatch.supervise.stall.healing import Healer
from hangwatch.supervise.stall.judgement import Judgement
from hangwatch.supervise.stall.recording import Recorder, last_progress
from hangwatch.supervise.stall.remedies import Remedies

if TYPE_CHECKING:
    from hangwatch.records.gpu import KernelEvent
    from hangwatch.records.incident import Action, Finding
    from hangwatch.recover.restart import RestartDecision
    from hangwatch.supervise.books.books import RunAccounts

# The incident records and the diagnosis are imported when the first incident comes: a job that never stalls does
# not pay for them when hangwatch starts.


class IncidentHandler:
    """Declares, records and acts on incidents for one run."""

    def __init__(self, ctx: RunContext, books: RunAccounts, capturer: Capturer) -> None:
        self.ctx, self.books, self.capturer = ctx, books, capturer
        self.recorder = Recorder(ctx, books)
        self.healer = Healer(ctx, books, self.recorder)
        self.remedies = Remedies(ctx, books)

    def declare(self, j: Judgement) -> Outcome:
        """Hung (the run loop has marked the attempt so): decide (with the other nodes), write the incident, then
        act on it: the attempt's end, or None while it is left running (reported, or asked to heal)."""
        from hangwatch.records.incident import Action

        a, ctx = j.attempt, self.ctx
        if ctx.ledger.stall_open_since is None:  # a stall a heal did not end is the same stall
            ctx.ledger.open_stall(a.detector.last.at if a.detector.last else a.started_at)
        if a.action == OnHang.HEAL:
            healing = self.healer.heal_or_not(j)
            if not isinstance(healing, Judgement):
                return healing
            j = healing
        root = j.diagnosis.root
        status, decision = self._decide(a, root)
        action = Action.REPORTED if decision is None else Action.RESTARTED if decision.restart else Action.KILLED
        ctx.hangs.append(Hang.of(root))
        remedy = self.remedies.remedy_for(root, a.number + 1) if decision is not None and decision.restart else None
        path = self._record_hang(j, action, remedy)
        if decision is None:
            return None
        if not a.job.owned and ctx.signalled.is_set():  # told to stop during the look: detach, end nothing
            ctx.say("hangwatch: told to stop while it looked: the job is left running (the incident is written).")
            return None
        return EndJob(
            f"hung: {root.cause}",
            AttemptEnd(status.code, decision, status),
            action=action.value,
            fields=(("incident", str(path) if path else None),),
        )

    def _decide(self, a: Attempt, root: Finding) -> tuple[ExitStatus, RestartDecision | None]:
        """What is done on this hang, decided with the other nodes (``a.action``), the exit the run ends with here,
        and the restart policy's decision (None: reported, the job left running)."""
        ctx = self.ctx
        futile = a.action == OnHang.RESTART and ctx.policy.would_stop(
            a.number, progressed=a.steps.progressed, max_step=a.steps.max_step
        )
        status = self.remedies.hung_status(root, futile)
        a.action, followed = ctx.agree(a.number, a.action, status, root.cause, root)
        if a.action == OnHang.REPORT:
            return followed or status, None
        decision = ctx.policy.decide(
            a.number, asked=a.action == OnHang.RESTART, progressed=a.steps.progressed, max_step=a.steps.max_step
        )
        return followed or status, decision

    def _record_hang(self, j: Judgement, action: Action, remedy: str | None) -> Path | None:
        """Evidence before action: the hang's incident written (None where it could not be)."""
        a = j.attempt
        return self.recorder.capture(
            j.evidence,
            j.diagnosis,
            attempt=a.number,
            action=action,
            detector=a.detector,
            detected_at=j.now,
            stalled=j.stalled,
            remedy=remedy,
        )

    def report(self, j: Judgement, when: str) -> None:
        """An incident for a job that is alive or waiting, not (yet) hung: nothing is done to it."""
        from hangwatch.diagnose import Diagnosis
        from hangwatch.records.incident import Action

        a, diagnosis = j.attempt, j.diagnosis
        root = dataclasses.replace(diagnosis.root, evidence=(*diagnosis.root.evidence, when))
        self.recorder.capture(
            j.evidence,
            Diagnosis(diagnosis.verdict, (root, *diagnosis.findings[1:])),
            attempt=a.number,
            action=Action.NONE,
            detector=a.detector,
            detected_at=j.now,
            stalled=j.stalled,
        )

    def job_exited(self, a: Attempt, code: int, leftovers: list[int]) -> AttemptEnd:
        """The job ended by itself (its output drained and taken; ``leftovers``: its orphans, which the loop ended
        first): finished, or a crash incident (and a restart if asked, or if another node decided one)."""
        ctx = self.ctx
        ctx.ledger.close_stall(ctx.clock.now())
        if not a.job.owned:  # its parent reaps it: its exit status is not ours to read
            ctx.rundir.event(EventKind.JOB_EXIT, attempt=a.number, exit_code=None, orphans_killed=[])
            ctx.say(f"hangwatch: pid {a.job.pid} ended; its exit status goes to its parent, not to hangwatch.")
            return AttemptEnd(0, None, ExitStatus(0, ExitReason.FINISHED, "the job hangwatch attached to ended"))
        status = 128 - code if code < 0 else code
        ctx.rundir.event(EventKind.JOB_EXIT, attempt=a.number, exit_code=status, orphans_killed=leftovers)
        if code == 0:
            return AttemptEnd(0)
        kernel, findings = self._crash_findings(a, code)
        asked = ctx.cfg.restart_on_crash
        # The other nodes' ranks now wait for ours: stop or restart them too (or follow the node that ended ours).
        node = ctx.nodes.node if ctx.nodes is not None else 0
        crashed = ExitStatus(status, ExitReason.CRASHED, f"node {node}'s job exited with status {status}")
        won, followed = ctx.agree(
            a.number, OnHang.RESTART if asked else OnHang.KILL, crashed, findings[0].cause, findings[0]
        )
        if followed is not None:
            asked = won == OnHang.RESTART
        decision = ctx.policy.decide(a.number, asked=asked, progressed=a.steps.progressed, max_step=a.steps.max_step)
        from hangwatch.records.incident import Action, Incident, Verdict

        incident = Incident(
            verdict=Verdict.CRASHED,
            detected_at=ctx.clock.now(),
            last_progress=last_progress(a.detector),
            attempt=a.number,
            action=Action.RESTARTED if decision.restart else Action.NONE,
            processes=(),
            findings=findings,
            kernel=kernel,
            notes=(kmsg.note,) if (kmsg := self.capturer.kmsg) is not None and kmsg.note else (),
            remedy=self.remedies.remedy_for(findings[0], a.number + 1) if decision.restart else None,
        )
        self.recorder.record(incident, 0.0)
        if followed is not None:
            return AttemptEnd(followed.code, decision, followed)
        return AttemptEnd(status, decision)

    def _crash_findings(self, a: Attempt, code: int) -> tuple[tuple[KernelEvent, ...], tuple[Finding, ...]]:
        """Why the job crashed (exit ``code``): the kernel log since its launch, and the crash's findings from its
        output's end, the cgroup's OOM kills, the kernel log and the DataLoader workers' deaths."""
        from hangwatch.capture.kernel import read_cursor
        from hangwatch.diagnose.crash import diagnose_crash

        oom_now = cgroup_oom_kills(os.getpid())
        oom = (oom_now - a.oom_start) if oom_now is not None and a.oom_start is not None else 0
        kmsg = self.capturer.kmsg
        kernel = read_cursor(kmsg) if kmsg is not None else ()
        findings = diagnose_crash(
            code,
            self.capturer.output_tail(a.log_offset),
            oom_kills=oom,
            pid=a.job.pid,
            kernel=kernel,
            known_pids=tuple(a.job.known_pids()),
            worker_deaths=tuple(self.ctx.rundir.layout.worker_deaths()),
            ended_at=time.time(),  # the records' clock: the wall's
        )
        return kernel, tuple(findings)
