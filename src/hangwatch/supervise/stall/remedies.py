"""What a hang leads to beyond this attempt: the exit the run ends with (worth a requeue or not,
recover/exitcode.py), and, when the user's fallbacks are used up, the remedy the next attempt runs, chosen by the
cause, the deadline and the budget (recover/choice.py)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hangwatch.records.run import EventKind
from hangwatch.recover.exitcode import ExitStatus, Hang, deterministic, hung_exit
from hangwatch.recover.remedy import ladder
from hangwatch.supervise.context import RunContext

if TYPE_CHECKING:
    from hangwatch.records.incident import Finding
    from hangwatch.supervise.books.books import RunAccounts


class Remedies:
    """The exit of a hung run and the next attempt's remedy."""

    def __init__(self, ctx: RunContext, books: RunAccounts) -> None:
        self.ctx, self.books = ctx, books

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
