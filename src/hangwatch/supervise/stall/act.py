"""What happens when a job is declared hung, or crashes: one decision (with the other nodes), the
incident on disk and announced before anything is done (evidence before action), then the act: report,
kill, or restart with the remedy the cause names, chosen by the deadline and the budget. The exit the run
ends with follows the exit-code contract (recover/exitcode.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hangwatch.capture.cgroup import cgroup_oom_kills
from hangwatch.causes import Cause
from hangwatch.errors import CaptureError
from hangwatch.records import layout
from hangwatch.records.layout import command_name
from hangwatch.records.run import Decision, EventKind, OnHang
from hangwatch.recover.exitcode import (
    ExitReason,
    ExitStatus,
    Hang,
    deterministic,
    hung_exit,
)
from hangwatch.recover.remedy import ladder
from hangwatch.supervise.attempt import Attempt, AttemptEnd, EndJob, Outcome, Reopen
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.progress.detector import StallDetector, State
from hangwatch.supervise.stall.capturing import Capturer
from hangwatch.supervise.stall.judgement import Judgement

if TYPE_CHECKING:
    from hangwatch.records.evidence import Evidence
    from hangwatch.records.gpu import KernelEvent
    from hangwatch.records.incident import Action, Finding, Incident, LastProgress
    from hangwatch.recover.heal import HealAsk
    from hangwatch.recover.restart import RestartDecision
    from hangwatch.supervise.books.books import RunAccounts

# The incident records, their rendering and the diagnosis are imported when the first incident comes:
# a job that never stalls does not pay for them when hangwatch starts.

log = logging.getLogger(__name__)

FOLLOW_WINDOW_S = 1.0  # the capture a node takes of its own part before it follows another node's decision


def flight_dumps(evidence: Evidence) -> dict[int, str]:
    """Each rank's whole flight recorder dump, as read at the capture (rank -> JSON text)."""
    return {
        p.info.rank if p.info.rank is not None else p.info.pid: p.flight.raw
        for p in evidence.processes
        if p.flight is not None and p.flight.raw
    }


def _fields(answer: dict[str, Any]) -> dict[str, Any]:
    """A job's heal answer as an event's fields (the event's own time and kind kept)."""
    return {("healed_at" if k == "at" else k): v for k, v in answer.items() if k not in ("ok", "event", "attempt")}


def last_progress(det: StallDetector) -> LastProgress | None:
    """The detector's newest counted progress, as the incident records it."""
    from hangwatch.records.incident import LastProgress

    return LastProgress(at=det.last.at, step=det.last.step, source=det.last.source) if det.last else None


class IncidentHandler:
    """Declares, records and acts on incidents for one run."""

    def __init__(self, ctx: RunContext, books: RunAccounts, capturer: Capturer) -> None:
        self.ctx, self.books, self.capturer = ctx, books, capturer
        self._heal_seq = 0  # the newest heal asked of any attempt (the job answers each once)

    # --- heal in place (--on-hang heal; recover/heal.py) ---------------------------------------------------------
    def _ask_heal(self, j: Judgement, ask: HealAsk) -> Reopen | None:
        """Evidence before action: the incident (action `healed`) is written, then the job is asked; it goes on
        (``Reopen``: the ask could not be written, the job is judged again and restarted instead)."""
        from hangwatch.diagnose import Diagnosis
        from hangwatch.diagnose.assemble import build_incident
        from hangwatch.records.incident import Action

        a, ctx, root = j.attempt, self.ctx, j.diagnosis.root
        again = (ask.record, ask.batch) in a.heal.asked
        a.heal.asked.add((ask.record, ask.batch))
        root = dataclasses.replace(root, evidence=(*root.evidence, ask.plan_text(again)))
        incident = build_incident(
            j.evidence,
            Diagnosis(j.diagnosis.verdict, (root, *j.diagnosis.findings[1:])),
            attempt=a.number,
            action=Action.HEALED,
            last_progress=last_progress(a.detector),
            detected_at=j.now,
        )
        try:
            path: Path | None = self.record(incident, j.stalled, flight_dumps(j.evidence))
        except Exception:  # a full disk must not keep a hung job from being healed
            log.exception("could not record the incident")
            path = None
        try:
            ask.write()
        except OSError as e:
            return self._not_healed(a, f"the ask could not be written ({e.strerror})")
        a.heal.asking, a.heal.asked_at = ask, ctx.clock.now()
        a.heal.incident = str(path) if path else None
        ctx.rundir.event(
            EventKind.HEAL,
            attempt=a.number,
            outcome="asked",
            worker=ask.worker,
            pid=ask.pid,
            batch=ask.batch,
            sample=ask.sample,
            incident=a.heal.incident,
        )
        ctx.say(
            f"hangwatch: healing in place: DataLoader worker {ask.worker} (pid {ask.pid}) is replaced inside the job."
        )
        return None

    def heal_tick(self, a: Attempt, now: float) -> Reopen | None:
        """The job's answers, as they come: a heal done (said, counted, its skipped samples written), one that could
        not be (the job is restarted instead), or none in time; a healed job that does not move is judged again
        (``Reopen``)."""
        from hangwatch.recover.heal import ANSWER_S, HealAnswers

        h, reopen = a.heal, None
        if h.answers is None:
            h.answers = HealAnswers(self.ctx.rundir.heartbeat_dir)
        for answer in h.answers.new():
            asked = h.asking is not None and answer.get("seq") == h.asking.seq
            if not asked and answer.get("seq") is not None:
                continue  # an earlier attempt's, or one given up on
            ask = h.asking if asked else None
            if asked:
                self._withdraw(a)
            if answer.get("ok"):
                self._healed(a, answer, ask, now, hung=reopen is None and a.detector.state == State.HUNG)
            elif answer.get("gone"):  # it moved on or was replaced since the capture: judged again, as it is now
                self.ctx.rundir.event(EventKind.HEAL, attempt=a.number, outcome="not_needed", **_fields(answer))
                reopen = Reopen()
            elif asked:
                reopen = self._not_healed(a, str(answer.get("why") or "the job could not replace the worker")) or reopen
            else:
                self.ctx.rundir.event(EventKind.HEAL, attempt=a.number, outcome="not_healed", **_fields(answer))
        if h.asking is not None and now - h.asked_at > ANSWER_S:
            self._withdraw(a)
            if reopen is None and a.detector.state == State.HUNG:
                why = f"the job did not answer within {ANSWER_S:.0f} s (its main process is not waiting for a batch)"
                reopen = self._not_healed(a, why)
            else:  # it moved by itself meanwhile: nothing to heal
                self.ctx.rundir.event(EventKind.HEAL, attempt=a.number, outcome="not_needed", why="the job moved")
        if reopen is not None or a.detector.state != State.HUNG:
            h.healed_at = None
        elif h.asking is None and (h.healed_at is None or now >= h.healed_at + a.detector.threshold()):
            h.healed_at = None  # replaced, and still no progress (or nothing in flight): captured and judged again
            reopen = Reopen()
        return reopen

    def _withdraw(self, a: Attempt) -> None:
        """The ask in flight is answered or given up on: its file goes, so the job never acts on it later."""
        ask, a.heal.asking = a.heal.asking, None
        if ask is not None:
            with contextlib.suppress(OSError):
                ask.request_path.unlink()

    def _healed(self, a: Attempt, answer: dict[str, Any], ask: HealAsk | None, now: float, hung: bool) -> None:
        from hangwatch.recover.heal import said

        ctx = self.ctx
        if hung:
            a.heal.healed_at = now
        ctx.ledger.heals += 1
        text = ask.sample_text if ask is not None else None
        skipped = answer.get("skipped")
        for index in skipped if isinstance(skipped, list) else []:
            ctx.ledger.skipped_samples += 1
            record = {
                "index": index,
                "sample": text if ask is not None and index == ask.sample else None,
                "batch": answer.get("batch"),
                "dataset": answer.get("dataset"),
                "dataset_key": answer.get("dataset_key"),
                "action": answer.get("action"),
                "why": f"it hung twice ({answer.get('why') or 'stuck'})",
                "at": answer.get("at"),
                "attempt": a.number,
                "incident": a.heal.incident if ask is not None else None,
            }
            try:
                ctx.rundir.skipped(record)
            except OSError:  # a full disk: the event below still has it
                log.exception("could not record a skipped sample")
        ctx.rundir.event(EventKind.HEAL, attempt=a.number, outcome="healed", **_fields(answer))
        ctx.say(f"hangwatch: healed: {said(answer, text)}.")
        self.books.write_summary(final=False)

    def _not_healed(self, a: Attempt, why: str, ask_again: bool = True) -> Reopen | None:
        """Heal cannot help here: said, and the job is restarted instead (``ask_again``: captured and judged again
        first, so its incident says what it is doing now: ``Reopen``)."""
        ctx = self.ctx
        ctx.rundir.event(EventKind.HEAL, attempt=a.number, outcome="not_healed", why=why)
        ctx.say(f"hangwatch: not healed in place: {why}; restarting instead.")
        a.action = OnHang.RESTART
        return Reopen() if ask_again else None

    def declare(self, j: Judgement) -> Outcome:
        """Hung (the run loop has marked the attempt so): decide (with the other nodes), write the incident, then
        act on it: the attempt's end, or None while it is left running (reported, or asked to heal)."""
        from hangwatch.records.incident import Action

        a, ctx = j.attempt, self.ctx
        if ctx.ledger.stall_open_since is None:  # a stall a heal did not end is the same stall
            ctx.ledger.open_stall(a.detector.last.at if a.detector.last else a.started_at)
        if a.action == OnHang.HEAL:
            healing = self._heal_or_not(j)
            if not isinstance(healing, Judgement):
                return healing
            j = healing
        root = j.diagnosis.root
        status, decision = self._decide(a, root)
        action = Action.REPORTED if decision is None else Action.RESTARTED if decision.restart else Action.KILLED
        ctx.hangs.append(Hang.of(root))
        remedy = self.remedy_for(root, a.number + 1) if decision is not None and decision.restart else None
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

    def _heal_or_not(self, j: Judgement) -> Reopen | Judgement | None:
        """--on-hang heal: the job asked to heal in place (what that returns), or the judgement to restart on, with
        why heal could not help in its root's evidence (the attempt is restarted from now on)."""
        from hangwatch.diagnose import Diagnosis
        from hangwatch.recover.heal import HealAsk, plan

        a, ctx, root = j.attempt, self.ctx, j.diagnosis.root
        left = ctx.cfg.max_heals - ctx.ledger.heals
        ask = plan(root, j.evidence, ctx.rundir.heartbeat_dir, self._heal_seq + 1, left, ctx.cfg.max_heals)
        if isinstance(ask, HealAsk):
            self._heal_seq += 1
            return self._ask_heal(j, ask)
        self._not_healed(a, ask, ask_again=False)
        root = dataclasses.replace(root, evidence=(*root.evidence, f"not healed in place: {ask}"))
        return j.revised(Diagnosis(j.diagnosis.verdict, (root, *j.diagnosis.findings[1:])))

    def _decide(self, a: Attempt, root: Finding) -> tuple[ExitStatus, RestartDecision | None]:
        """What is done on this hang, decided with the other nodes (``a.action``), the exit the run ends with here,
        and the restart policy's decision (None: reported, the job left running)."""
        ctx = self.ctx
        futile = a.action == OnHang.RESTART and ctx.policy.would_stop(
            a.number, progressed=a.steps.progressed, max_step=a.steps.max_step
        )
        status = self.hung_status(root, futile)
        a.action, followed = ctx.agree(a.number, a.action, status, root.cause, root)
        if a.action == OnHang.REPORT:
            return followed or status, None
        decision = ctx.policy.decide(
            a.number, asked=a.action == OnHang.RESTART, progressed=a.steps.progressed, max_step=a.steps.max_step
        )
        return followed or status, decision

    def _record_hang(self, j: Judgement, action: Action, remedy: str | None) -> Path | None:
        """Evidence before action: the hang's incident written (None where it could not be: a full disk must not
        keep a hung job from being ended or restarted)."""
        from hangwatch.diagnose.assemble import build_incident

        a = j.attempt
        incident = build_incident(
            j.evidence,
            j.diagnosis,
            attempt=a.number,
            action=action,
            last_progress=last_progress(a.detector),
            detected_at=j.now,
            remedy=remedy,
        )
        try:
            return self.record(incident, j.stalled, flight_dumps(j.evidence))
        except Exception:  # the act goes on without its record; what failed is logged
            log.exception("could not record the incident")
            return None

    def follow(self, a: Attempt, called: Decision, restart: bool) -> None:
        """Another node decided to end the job: before this node ends its part, its own evidence: a short
        capture, merged with every node's summary (the decider's finding), written as this node's incident with
        the decision in it. Nothing is ended on any node without an incident on that node. ``restart``: what
        this node's restart policy made of the decision."""
        from hangwatch.diagnose import Diagnosis, diagnose
        from hangwatch.diagnose.assemble import build_incident
        from hangwatch.records.incident import Action, Finding

        ctx, det, now = self.ctx, a.detector, self.ctx.clock.now()
        evidence = self.capturer.look(a.job.pid, window=min(self.capturer.window(), FOLLOW_WINDOW_S))
        if isinstance(evidence, CaptureError):
            return  # the job is gone, or cannot be read: the decision and why are in events.jsonl
        diagnosis = diagnose(evidence)
        merged_cause = None
        if ctx.nodes is not None:
            merged = ctx.nodes.merge(a.number, evidence, diagnosis, FOLLOW_WINDOW_S, ctx.clock.now())
            ctx.rundir.event(EventKind.NODES, attempt=a.number, reported=list(merged.reported), merged=merged.cause)
            diagnosis, merged_cause = merged.diagnosis, merged.cause
        late = ctx.nodes is not None and merged_cause != called.cause  # read only when this look missed it
        seen = ctx.nodes.finding_of(a.number, called.by) if late and ctx.nodes is not None else None
        if seen is not None:
            # This look came too late or from too far to see what the decider saw (its ranks may already fail
            # in their collectives): the decider's root leads, this node's own findings follow it.
            try:
                decided = Finding.from_dict(seen)
            except (KeyError, TypeError, ValueError):  # another version's finding: the decision still says why
                decided = None
            if decided is not None:
                diagnosis = Diagnosis(diagnosis.verdict, (decided, *diagnosis.findings))
        root = diagnosis.root
        act = OnHang(called.action)
        said = f"node {called.by} decided to {act.value} the job: {called.why or called.cause}"
        root = dataclasses.replace(root, evidence=(*root.evidence, said))
        from hangwatch.records.incident import Verdict

        verdict = Verdict.HUNG if called.code is not None else diagnosis.verdict
        action = Action.RESTARTED if restart else Action.KILLED
        incident = build_incident(
            evidence,
            Diagnosis(verdict, (root, *diagnosis.findings[1:])),
            attempt=a.number,
            action=action,
            last_progress=last_progress(det),
            detected_at=now,
        )
        try:
            self.record(incident, det.stalled_for(now), flight_dumps(evidence))
        except Exception:  # a report that cannot be written must not keep the job from being ended
            log.exception("could not record the incident")

    def report(self, j: Judgement, when: str) -> None:
        """An incident for a job that is alive or waiting, not (yet) hung: nothing is done to it."""
        from hangwatch.diagnose import Diagnosis
        from hangwatch.diagnose.assemble import build_incident
        from hangwatch.records.incident import Action

        a, evidence, diagnosis, now, stalled = j.attempt, j.evidence, j.diagnosis, j.now, j.stalled
        root = diagnosis.root
        root = dataclasses.replace(root, evidence=(*root.evidence, when))
        incident = build_incident(
            evidence,
            Diagnosis(diagnosis.verdict, (root, *diagnosis.findings[1:])),
            attempt=a.number,
            action=Action.NONE,
            last_progress=last_progress(a.detector),
            detected_at=now,
        )
        try:
            self.record(incident, stalled, flight_dumps(evidence))
        except Exception:  # a report that cannot be written must not stop supervision
            log.exception("could not record the incident")

    def hung_status(self, root: Finding, futile: bool = False) -> ExitStatus:
        """The exit a hung run ends with here: worth a requeue, or not (recover/exitcode.py)."""
        rungs = ladder(root, dict(self.ctx.cfg.remedies))
        tried = {r.remedy for r in self.ctx.remedies.applied}
        left = None if not rungs else any(r not in tried for r in rungs)
        bug = None
        if deterministic(root):
            bug = root.proof.fact if root.proof is not None else f"{root.cause} is a bug in the code by nature"
        return hung_exit(Hang.of(root), self.ctx.hangs, left, futile, bug)

    def remedy_for(self, root: Finding, next_attempt: int) -> str | None:
        """When the user's fallbacks are used up, the cause picks the next attempt's remedy (text)."""
        ctx, cfg = self.ctx, self.ctx.cfg
        if not cfg.auto_fallback or next_attempt <= len(cfg.fallbacks) + 1:
            return None
        candidates = ctx.remedies.candidates(root, loader_overrides=cfg.autobeat)
        from hangwatch.recover.choice import choose

        s = self.books.summary(final=False)
        # A hung job's recent rate may be gone (its newest points are one epoch's first batch): the last one known.
        rate = s.steps_per_s or self.books.known_rate or self._attempt_rate()
        total = s.total_steps or self.books.known_total
        left = total - s.last_step if total and s.last_step is not None else None
        measured = {str(r["remedy"]): float(r["rate_vs_previous"]) for r in s.remedies if r.get("rate_vs_previous")}
        choice = choose(
            candidates,
            now=ctx.clock.now(),
            steps_left=left,
            rate=rate,
            spent_usd=s.cost_usd,
            cost_per_hour=cfg.cost_per_hour,
            deadline=cfg.deadline,
            budget=cfg.budget,
            measured=measured,
            configured=dict(cfg.remedy_rates),
            probed=self._probed_rates(),
        )
        if choice is None:
            return None
        applied = ctx.remedies.apply(choice.remedy, root, next_attempt, why=choice.why)
        if choice.why:
            ctx.rundir.event(EventKind.REMEDY_CHOICE, attempt=next_attempt, remedy=choice.remedy, why=choice.why)
            ctx.say(f"hangwatch: remedy for attempt {next_attempt}: {choice.why}")
        return f"{applied.text} (for {applied.cause}, from attempt {next_attempt})" + (
            f"; {choice.why}" if choice.why else ""
        )

    def _attempt_rate(self) -> float | None:
        """The current attempt's mean step rate, from its launch to its newest step (start-up included, so
        a low estimate): for a job whose steps all came between two polls, where no rate was measured."""
        a = self.ctx.attempts[-1] if self.ctx.attempts else None
        if a is None or a.steps.last_global is None or a.detector.last is None:
            return None
        ck = a.resume.resumed_from
        base = ck.step if a.resume.resume_given and ck and ck.step else 0
        elapsed = a.detector.last.at - a.started_at
        return (a.steps.last_global - base) / elapsed if a.steps.last_global > base and elapsed > 0 else None

    def _probed_rates(self) -> dict[str, float]:
        """Rate factors from a probe-data report saved in the run directory (probe.json), if any."""
        from hangwatch.recover.choice import probe_rates

        try:
            report = json.loads((self.ctx.cfg.run_dir / "probe.json").read_text())
        except (OSError, ValueError):
            return {}
        return probe_rates(report) if isinstance(report, dict) else {}

    def record(self, incident: Incident, stalled: float, flight: dict[int, str] | None = None) -> Path:
        """Evidence before action: the incident is on disk and announced before anything is killed."""
        from hangwatch.report.banner import incident_banner, notification

        ctx = self.ctx
        path = ctx.rundir.write_incident(incident, flight)
        ctx.ledger.incidents += 1
        root = incident.root_cause
        ctx.incident_counts[(root.cause if root else Cause.UNKNOWN, incident.verdict.value)] += 1
        ctx.rundir.event(
            EventKind.INCIDENT,
            attempt=incident.attempt,
            verdict=incident.verdict.value,
            cause=root.cause if root else None,
            path=str(path),
            action=incident.action.value,
        )
        self.books.write_summary(final=False)
        page = self.books.write_page()
        banner = incident_banner(incident, stalled, path / layout.REPORT, page)
        ctx.say("\n".join(banner))
        ctx.notifier.send(*notification(command_name(ctx.cfg.argv), incident, banner))
        return path

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
            remedy=self.remedy_for(findings[0], a.number + 1) if decision.restart else None,
        )
        self.record(incident, 0.0)
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
