"""--on-hang heal, the run's side (the job's side is the hook's heal, recover/heal.py the asks and answers): a hung
DataLoader worker replaced inside the job. The incident (action `healed`) is written, then the job is asked; its
answers come at the next rounds: healed (said, counted, its skipped samples written), not healed (restarted
instead), or none in time. A healed job that does not move is judged again."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from hangwatch.records.run import EventKind, OnHang
from hangwatch.supervise.attempt import Attempt, Reopen
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.progress.detector import State
from hangwatch.supervise.stall.judgement import Judgement
from hangwatch.supervise.stall.recording import Recorder

if TYPE_CHECKING:
    from hangwatch.recover.heal import HealAsk
    from hangwatch.supervise.books.books import RunAccounts

log = logging.getLogger(__name__)


def _fields(answer: dict[str, Any]) -> dict[str, Any]:
    """A job's heal answer as an event's fields (the event's own time and kind kept)."""
    return {("healed_at" if k == "at" else k): v for k, v in answer.items() if k not in ("ok", "event", "attempt")}


class Healer:
    """Heals a hung job in place where its cause allows, and follows the job's answers."""

    def __init__(self, ctx: RunContext, books: RunAccounts, recorder: Recorder) -> None:
        self.ctx, self.books, self.recorder = ctx, books, recorder
        self._seq = 0  # the newest heal asked of any attempt (the job answers each once)

    def heal_or_not(self, j: Judgement) -> Reopen | Judgement | None:
        """The job asked to heal in place (what that returns), or the judgement to restart on, with why heal could
        not help in its root's evidence (the attempt is restarted from now on)."""
        from hangwatch.diagnose import Diagnosis
        from hangwatch.recover.heal import HealAsk, plan

        a, ctx, root = j.attempt, self.ctx, j.diagnosis.root
        left = ctx.cfg.max_heals - ctx.ledger.heals
        ask = plan(root, j.evidence, ctx.rundir.heartbeat_dir, self._seq + 1, left, ctx.cfg.max_heals)
        if isinstance(ask, HealAsk):
            self._seq += 1
            return self._ask(j, ask)
        self._not_healed(a, ask, ask_again=False)
        root = dataclasses.replace(root, evidence=(*root.evidence, f"not healed in place: {ask}"))
        return j.revised(Diagnosis(j.diagnosis.verdict, (root, *j.diagnosis.findings[1:])))

    def _ask(self, j: Judgement, ask: HealAsk) -> Reopen | None:
        """Evidence before action: the incident (action `healed`) is written, then the job is asked; it goes on
        (``Reopen``: the ask could not be written, the job is judged again and restarted instead)."""
        from hangwatch.diagnose import Diagnosis
        from hangwatch.records.incident import Action

        a, ctx, root = j.attempt, self.ctx, j.diagnosis.root
        again = (ask.record, ask.batch) in a.heal.asked
        a.heal.asked.add((ask.record, ask.batch))
        root = dataclasses.replace(root, evidence=(*root.evidence, ask.plan_text(again)))
        path = self.recorder.capture(
            j.evidence,
            Diagnosis(j.diagnosis.verdict, (root, *j.diagnosis.findings[1:])),
            attempt=a.number,
            action=Action.HEALED,
            detector=a.detector,
            detected_at=j.now,
            stalled=j.stalled,
        )
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

    def tick(self, a: Attempt, now: float) -> Reopen | None:
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
