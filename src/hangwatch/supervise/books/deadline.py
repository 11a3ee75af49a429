"""--deadline: the projected finish (now + ETA) against a time the run must end by; a warning when the
projection crosses it, and another when it comes back. Pure: the loop hands it each summary."""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from datetime import datetime

from hangwatch.errors import UsageError
from hangwatch.records.run import RunState, RunSummary

_RELATIVE = re.compile(
    r"^\+\s*(?:(\d+(?:\.\d+)?)d)?\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m)?\s*"
    r"(?:(\d+(?:\.\d+)?)s)?$"
)
HOLD_S = 30.0  # a projection must stay across the deadline this long before the warning (rates are noisy)


def parse_deadline(text: str, now: float | None = None) -> float:
    """``+36h``, ``+2d12h``, ``+90m`` from now, or an ISO time (``2026-11-26T18:00``, local unless it says
    its zone); unix time. UsageError otherwise."""
    now = time.time() if now is None else now
    raw = str(text).strip()
    m = _RELATIVE.match(raw)
    if raw.startswith("+") and m and any(m.groups()):
        d, h, mins, s = (float(g) if g else 0.0 for g in m.groups())
        return now + d * 86400 + h * 3600 + mins * 60 + s
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError as e:
        raise UsageError(
            f"--deadline {raw!r} is neither a time from now (+36h, +2d12h, +90m) nor an ISO time",
            "Pass e.g. --deadline +36h or --deadline 2026-11-26T18:00",
        ) from e


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


@dataclass
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
