"""--deadline: the projected finish (now + ETA) against a time the run must end by; a warning when the
projection crosses it, and another when it comes back. Pure: the loop hands it each summary."""

from __future__ import annotations

import dataclasses

from hangwatch.records.run import RunState, RunSummary
from hangwatch.records.values import mutable

HOLD_S = 30.0  # a projection must stay across the deadline this long before the warning (rates are noisy)


def with_deadline(summary: RunSummary, deadline: float, now: float) -> RunSummary:
    """The summary with deadline, finish_at, meets_deadline and slack_seconds: the projection (now +
    ETA) while it runs, None where no ETA is known; once a run has finished, when it did."""
    if summary.ended_at is not None and summary.state == RunState.FINISHED:
        finish: float | None = summary.ended_at
    elif summary.ended_at is None and summary.eta_seconds is not None:
        finish = now + summary.eta_seconds
    else:
        finish = None
    if finish is None:
        return dataclasses.replace(summary, deadline=round(deadline, 3))
    return dataclasses.replace(
        summary,
        deadline=round(deadline, 3),
        finish_at=round(finish, 3),
        meets_deadline=finish <= deadline,
        slack_seconds=round(deadline - finish, 1),
    )


@mutable
class DeadlineWatch:
    """Says when the projection crosses the deadline (once it has held HOLD_S), and when it comes back."""

    deadline: float
    hold_s: float = HOLD_S
    meets: bool | None = None  # the last state warned about (None: nothing said yet)
    since: float | None = None  # the projection has been on the other side since then

    def news(self, summary: RunSummary, now: float) -> str | None:
        """A line to say (stderr, event, notification), or None."""
        if summary.meets_deadline is None or summary.ended_at is not None:
            return None
        side = summary.meets_deadline
        if self.meets is None and side:  # on time from the start: nothing to say
            self.meets = True
            return None
        if side == self.meets:
            self.since = None
            return None
        if self.since is None:
            self.since = now
        if now - self.since < self.hold_s:
            return None
        self.meets, self.since = side, None
        from hangwatch.report.banner import deadline_text  # imported when a deadline is set

        text = deadline_text(summary) or ""
        if side:
            return f"back on time: {text} at the current rate"
        return f"projected to miss the deadline: {text} at the current rate"
