"""Whether a failed attempt is restarted: one pure decision per attempt, made before its incident is
written, so the label on disk (``restarted`` or ``killed``) is what then happens.

Tested on scripted sequences of attempts, like the stall detector.
"""

from __future__ import annotations

from enum import Enum

from hangwatch.records.values import frozen

FUTILE_ATTEMPTS = 2  # stop restarting after this many attempts in a row that failed with no new progress


class GiveUp(str, Enum):
    """Why a failed attempt is not restarted."""

    NOT_ASKED = "not_asked"  # --on-hang kill, or a crash without --restart-on-crash
    MAX_RESTARTS = "max_restarts"
    NO_NEW_PROGRESS = "no_new_progress"


@frozen
class RestartDecision:
    """The outcome for one failed attempt: restart, or why not."""

    attempt: int
    restart: bool
    give_up: GiveUp | None = None
    futile: int = 0  # failed attempts in a row without new progress, this one included

    def message(self, max_restarts: int) -> str | None:
        """The one line a user reads when restarts stop (None when nothing needs saying)."""
        if self.give_up == GiveUp.MAX_RESTARTS:
            return (
                f"attempt {self.attempt} failed and the {max_restarts} restart(s) allowed are used up; "
                "stopping. Raise --max-restarts to allow more."
            )
        if self.give_up == GiveUp.NO_NEW_PROGRESS:
            return (
                f"the last {self.futile} attempts failed without any new progress; stopping restarts. "
                "Fix the cause named in the incident report, or add a --fallback."
            )
        return None


class RestartPolicy:
    """--max-restarts, attempts without new progress, and whether a restart was asked for at all."""

    def __init__(self, max_restarts: int, futile_limit: int = FUTILE_ATTEMPTS) -> None:
        self.max_restarts = max_restarts
        self.futile_limit = futile_limit
        self.best_step: int | None = None
        self.futile = 0
        self._decided: dict[int, RestartDecision] = {}

    def would_stop(self, attempt: int, *, progressed: bool, max_step: int | None) -> bool:
        """Whether a restart asked for ``attempt`` would be refused for lack of new progress (nothing
        recorded: the exit a node proposes to the others is settled before the decision is)."""
        if attempt in self._decided:
            return self._decided[attempt].give_up == GiveUp.NO_NEW_PROGRESS
        new_progress = progressed and (max_step is None or self.best_step is None or max_step > self.best_step)
        futile = 0 if new_progress else self.futile + 1
        return attempt <= self.max_restarts and futile >= self.futile_limit

    def decide(self, attempt: int, *, asked: bool, progressed: bool, max_step: int | None) -> RestartDecision:
        """Decide once for ``attempt`` (a later call for the same attempt returns the same decision).

        ``asked``: the user wants a restart for this kind of failure. ``progressed``: the attempt
        made any progress; ``max_step``: the highest step it reached, when counted."""
        if attempt in self._decided:
            return self._decided[attempt]
        new_progress = progressed and (max_step is None or self.best_step is None or max_step > self.best_step)
        if max_step is not None:
            self.best_step = max_step if self.best_step is None else max(self.best_step, max_step)
        self.futile = 0 if new_progress else self.futile + 1
        if not asked:
            d = RestartDecision(attempt, False, GiveUp.NOT_ASKED, self.futile)
        elif attempt > self.max_restarts:
            d = RestartDecision(attempt, False, GiveUp.MAX_RESTARTS, self.futile)
        elif self.futile >= self.futile_limit:
            d = RestartDecision(attempt, False, GiveUp.NO_NEW_PROGRESS, self.futile)
        else:
            d = RestartDecision(attempt, True, None, self.futile)
        self._decided[attempt] = d
        return d
