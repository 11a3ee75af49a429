"""--budget: warn once when the projected total cost of a run passes it; with --on-over-budget stop,
end the job cleanly, after its next checkpoint when autobeat has seen one."""

from __future__ import annotations

import itertools
from dataclasses import field

from hangwatch.records.run import RunSummary
from hangwatch.records.values import mutable
from hangwatch.report.units import usd

CHECKPOINT = "checkpoint"  # the phase autobeat declares around torch.save / dcp.save
MIN_CHECKPOINT_WAIT_S = 600.0  # waiting for the next checkpoint is bounded by this or 1.5x the longest gap seen


def over_budget_text(summary: RunSummary, budget: float) -> str | None:
    """``projected $23.40 > budget $15.00: short by $8.40 at the current rate``, or None within budget
    (or while nothing can be projected: no price, no total, no rate)."""
    if summary.cost_usd is None or summary.projected_cost_usd is None:
        return None
    total = summary.cost_usd + summary.projected_cost_usd
    if total <= budget:
        return None
    return f"projected {usd(total)} > budget {usd(budget)}: short by {usd(total - budget)} at the current rate"


@mutable
class BudgetWatch:
    """Watches the projection each round; says when to warn and when to stop."""

    budget: float
    stop: bool
    hold_s: float = 60.0  # stop only once the projection has stayed over the budget this long
    warned: bool = False
    over_since: float | None = None  # the projection has been over the budget since then (None: within it)
    over_at: float | None = None  # when stopping was decided (the projection held over for hold_s)
    checkpoint_starts: list[float] = field(default_factory=list)
    in_checkpoint: bool = False
    checkpoint_ended_at: float | None = None
    untrusted_noted: bool = False  # said once that the total is too weak to stop on

    def phase(self, name: str | None, now: float) -> None:
        """The job's current phase (from its heartbeats)."""
        if name == CHECKPOINT and not self.in_checkpoint:
            self.in_checkpoint = True
            self.checkpoint_starts.append(now)
        elif name != CHECKPOINT and self.in_checkpoint:
            self.in_checkpoint = False
            self.checkpoint_ended_at = now

    def warning(self, summary: RunSummary, now: float) -> str | None:
        """The over-budget line, the first time the projection passes the budget (then None)."""
        text = over_budget_text(summary, self.budget)
        if text is None:
            if self.over_at is None:
                self.over_since = None  # a dip of the rate passed: back within budget
            return None
        if self.over_since is None:
            self.over_since = now
        if self.over_at is None and now - self.over_since >= self.hold_s:
            self.over_at = now
        if self.warned:
            return None
        self.warned = True
        return text

    def stop_now(self, now: float, started_at: float) -> bool:
        """Whether to end the job now: over budget with --on-over-budget stop, and either no checkpoint
        was ever seen, the next one has ended, or waiting for it has taken too long."""
        if not self.stop or self.over_at is None or self.in_checkpoint:
            return False  # never in the middle of writing a checkpoint
        if not self.checkpoint_starts:
            return True
        if self.checkpoint_ended_at is not None and self.checkpoint_ended_at >= self.over_at:
            return True
        marks = [started_at, *self.checkpoint_starts]
        longest = max(b - a for a, b in itertools.pairwise(marks))
        return now - self.over_at > max(MIN_CHECKPOINT_WAIT_S, 1.5 * longest)

    def stop_pending(self) -> bool:
        """Stopping is decided and waits for its moment (the next checkpoint's end): the loop looks closely until
        then, so the job is ended within a round of it, not up to a resting round later."""
        return self.stop and self.over_at is not None

    def checkpoint_ended(self) -> bool:
        """A checkpoint ended after stopping was decided (the stop waited for it)."""
        return (
            self.over_at is not None
            and self.checkpoint_ended_at is not None
            and self.checkpoint_ended_at >= self.over_at
        )

    def waiting_for_checkpoint(self) -> bool:
        """Stopping after the next checkpoint, when one was seen."""
        return self.stop and bool(self.checkpoint_starts)
