"""Progress as the run loop takes it: once the loop gave a signal to the attempt's detector, what it means for
the ledger and the attempt's steps, the job's own step across attempts (what a restart did again), and the
checkpoints the job wrote."""

from __future__ import annotations

from hangwatch.records.run import EventKind
from hangwatch.supervise.attempt import Attempt
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.progress.checkpoints import Checkpoint, CheckpointLog, redone_steps, save_step
from hangwatch.supervise.progress.detector import Progress, State, Strength

PROGRESS_EVENT_EVERY_S = 10.0
PROGRESS_EVENT_AGED_S = 60.0  # past an attempt's first hour: one progress event a minute (weeks of runtime)
AGED_AFTER_S = 3600.0


class Tracker:
    """What each progress signal means for the attempt's steps and the ledger, once the loop gave it to the detector;
    and the job's checkpoint records, round by round."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.checkpoint_log = CheckpointLog(ctx.rundir.layout.checkpoints)
        self._checkpoints_read: list[dict[str, object]] = []
        self._event_at: dict[int, float] = {}  # attempt -> its newest `progress` event

    def take_checkpoints(self, a: Attempt) -> None:
        """This round's checkpoints. One is taken a round after it was read: the output the job printed before
        saving (its step) has arrived through the pumps by then."""
        for rec in self._checkpoints_read:
            self._checkpoint(a, rec)
        self._checkpoints_read = self.checkpoint_log.poll()

    def flush_checkpoints(self, a: Attempt) -> None:
        """Take every checkpoint recorded so far (the attempt ended: nothing more will be printed)."""
        for rec in [*self._checkpoints_read, *self.checkpoint_log.poll()]:
            self._checkpoint(a, rec)
        self._checkpoints_read = []

    def _checkpoint(self, a: Attempt, rec: dict[str, object]) -> None:
        """A checkpoint the job wrote. A trainer's carries its global step; a plain torch.save gets the
        job's own step around the save (checkpoints.save_step)."""
        raw_at, rank = rec.get("at"), rec.get("rank")
        at = float(raw_at) if isinstance(raw_at, int | float) else self.ctx.clock.now()
        step = (
            rec.get("step")
            if rec.get("kind") in ("lightning", "transformers")
            else save_step(str(rec["path"]), at, list(a.steps.global_points))
        )
        ckpt = Checkpoint(
            at=at,
            path=str(rec["path"]),
            step=step if isinstance(step, int) else None,
            kind=str(rec.get("kind") or "?"),
            attempt=a.number,
            rank=rank if isinstance(rank, int) else -1,
        )
        self.ctx.checkpoints.append(ckpt)
        del self.ctx.checkpoints[:-100]
        self.ctx.rundir.event(EventKind.CHECKPOINT, **ckpt.to_dict())

    def _global_step(self, p: Progress) -> int | None:
        """The job's own step, comparable across attempts: a trainer's global step (its beats start from
        where it resumed) when autobeat knows the trainer, else the log's counter."""
        if p.step is None:
            return None
        if self.ctx.intake.trainer_total:
            return p.step if p.strength == Strength.HEARTBEAT else None
        return p.step if p.strength == Strength.COUNTER else None

    def _saw_global(self, a: Attempt, step: int, at: float) -> None:
        ctx = self.ctx
        a.steps.last_global = step if a.steps.last_global is None else max(a.steps.last_global, step)
        a.steps.global_points.append((at, step))
        if a.steps.first_global is not None:
            return
        a.steps.first_global = step
        if a.number < 2:
            return
        # Where it started: after the checkpoint it was given; from scratch when its first step comes before
        # the newest checkpoint it was not given (the log shows the newest step of each poll, not the first).
        ck, before = a.resume.resumed_from, ctx.attempts[a.number - 2]
        over = ck is not None and ck.step is not None and ck.step >= 2 and step < ck.step and not a.resume.resume_given
        start = ck.step + 1 if ck is not None and ck.step is not None and a.resume.resume_given else 1 if over else step
        redo = redone_steps(before.steps.last_global, start)
        if redo:
            rate = before.detector.step_rate()
            seconds = redo / rate if rate else 0.0
            ctx.ledger.redone_steps += redo
            ctx.ledger.redone_seconds += seconds
            ctx.rundir.event(
                EventKind.REDONE,
                attempt=a.number,
                steps=redo,
                seconds=round(seconds, 1),
                from_step=start,
                previous_last=before.steps.last_global,
            )
        if over and ck is not None:
            ctx.rundir.event(EventKind.FROM_ZERO, attempt=a.number, step=step, checkpoint=ck.to_dict())
            ctx.say(
                f"hangwatch: attempt {a.number} started again from the beginning (step {step} seen), "
                f"although a checkpoint at step {ck.step} existed ({ck.path}); pass --resume-arg "
                "'--resume {checkpoint}' (your job's option), or make the job load its newest checkpoint."
            )

    def took(self, a: Attempt, p: Progress, was: State, counted: bool) -> None:
        """One progress signal, once the run loop gave it to the attempt's detector (``was``: its state before;
        ``counted``: it reset the stall clock): the steps, the ledger, a recovery from a declared hang."""
        ctx = self.ctx
        g = self._global_step(p)
        if g is not None:
            self._saw_global(a, g, p.at)
        if p.strength == Strength.HEARTBEAT and p.step is not None:
            a.steps.beat_steps = True
        if not counted:
            if p.strength == Strength.COUNTER and p.step is not None and not a.steps.beat_steps:
                # Beats without a step (DataLoader batches only) run the clock; the log still names the step.
                a.steps.max_step = p.step if a.steps.max_step is None else max(a.steps.max_step, p.step)
                ctx.ledger.last_step = p.step
                a.steps.saw_step(p.step)
            return
        ctx.ledger.saw(int(p.strength))
        if p.strength > Strength.OUTPUT:
            a.steps.progressed = True  # a banner line is not progress for the restart policy
        if p.step is not None:
            if p.strength == Strength.COUNTER:
                # The log's counter survives a resume from checkpoint; autobeat's optimizer step count
                # starts again at 1 in every attempt, so only the former compares across attempts.
                a.steps.max_step = p.step if a.steps.max_step is None else max(a.steps.max_step, p.step)
            ctx.ledger.last_step = p.step
            a.steps.saw_step(p.step, beat=p.strength == Strength.HEARTBEAT)
        if was == State.HUNG or ctx.ledger.stall_open_since is not None:  # (a healed job judged again, then moved)
            stalled = ctx.ledger.close_stall(p.at)
            if stalled is not None:
                ctx.rundir.event(EventKind.RECOVERED, attempt=a.number, stalled_seconds=round(stalled, 1), step=p.step)
                at_step = f" (step {p.step})" if p.step is not None else ""
                ctx.say(f"hangwatch: the job made progress again after {stalled:.0f} s{at_step}.")
        # The timeline of the HTML report is drawn from these: every second in an attempt's first half
        # minute, then sparser, up to every PROGRESS_EVENT_EVERY_S, and once a minute after the first hour
        # (a week-long run: ~10,000 lines, about 1 MB; summary.json keeps the totals).
        age = p.at - a.started_at
        every = min(PROGRESS_EVENT_EVERY_S if age < AGED_AFTER_S else PROGRESS_EVENT_AGED_S, max(1.0, age / 30))
        if self._event_at.get(a.number, float("-inf")) + every <= p.at:
            self._event_at[a.number] = p.at
            ctx.rundir.event(EventKind.PROGRESS, attempt=a.number, step=p.step, source=p.source)
