"""Accounting of a run: stalled time, goodput, step rate, ETA and cost, as a ``RunSummary``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hangwatch.records.run import RunState, RunSummary
from hangwatch.records.values import mutable
from hangwatch.redact import redact_text

if TYPE_CHECKING:
    from hangwatch.recover.remedy import Applied
    from hangwatch.supervise.attempt import Attempt

SIGNALS = ("none", "output", "counter", "heartbeat")  # in the order of the detector's Strength values


@mutable
class Ledger:
    """What a run has cost so far. Attempts run one at a time, so at most one stall is open."""

    started_at: float
    cost_per_hour: float | None = None
    incidents: int = 0
    last_step: int | None = None
    stalled_closed: float = 0.0
    stall_open_since: float | None = None  # the last progress before a declared, still open stall
    signal: str = "none"  # the strongest progress signal seen in any attempt: none | output | counter | heartbeat
    redone_steps: int = 0  # steps restarted attempts did again (they count as waste)
    heals: int = 0  # DataLoader workers replaced inside the job (--on-hang heal)
    skipped_samples: int = 0
    redone_seconds: float = 0.0

    def saw(self, strength: int) -> None:
        """A progress signal of this strength counted; remember the strongest kind ever seen."""
        if strength > SIGNALS.index(self.signal):
            self.signal = SIGNALS[strength]

    def open_stall(self, since: float) -> None:
        """A hang was declared; it has lasted since ``since`` (the last progress)."""
        self.stall_open_since = since

    def close_stall(self, at: float) -> float | None:
        """The stall ended at ``at`` (progress again, or the job was ended); its length, if one was open."""
        if self.stall_open_since is None:
            return None
        stalled = max(0.0, at - self.stall_open_since)
        self.stalled_closed += stalled
        self.stall_open_since = None
        return stalled

    def stalled(self, now: float) -> float:
        """Seconds spent hung so far, an open stall included."""
        return self.stalled_closed + (now - self.stall_open_since if self.stall_open_since is not None else 0.0)

    def summary(
        self,
        now: float,
        *,
        command: list[str],
        run_dir: str,
        state: RunState,
        attempts: int,
        exit_code: int | None,
        final: bool,
        rate: float | None,
        total: int | None,
    ) -> RunSummary:
        """The summary as of ``now`` (``final``: the run has ended; ``rate``: steps per second, if known)."""
        wall = max(1e-9, now - self.started_at)
        stalled = self.stalled(now)
        if total is not None and self.last_step is not None and self.last_step > total:
            total = None  # a per-epoch bar's N against a step count that runs across epochs: no total
        eta = None
        if rate and total and self.last_step is not None and total >= self.last_step:
            eta = round((total - self.last_step) / rate, 1)
        price = self.cost_per_hour
        return RunSummary(
            command=tuple(command),
            run_dir=run_dir,
            state=state,
            attempts=attempts,
            exit_code=exit_code if final else None,
            started_at=round(self.started_at, 3),
            ended_at=round(now, 3) if final else None,
            wall_seconds=round(wall, 1),
            last_step=self.last_step,
            incidents=self.incidents,
            stalled_seconds=round(stalled, 1),
            # Without a counter or a heartbeat nobody knows whether the job progressed: no goodput.
            goodput=round(max(0.0, 1.0 - stalled / wall), 4) if self.signal in ("counter", "heartbeat") else None,
            progress_signal=self.signal,
            total_steps=total,
            steps_per_s=round(rate, 4) if rate else None,
            eta_seconds=eta,
            cost_per_hour=price,
            cost_usd=None if price is None else round(wall / 3600 * price, 4),
            wasted_usd=None if price is None else round((stalled + self.redone_seconds) / 3600 * price, 4),
            redone_steps=self.redone_steps,
            heals=self.heals,
            skipped_samples=self.skipped_samples,
            redone_seconds=round(self.redone_seconds, 1),
            projected_cost_usd=None if price is None or eta is None else round(eta / 3600 * price, 4),
        )


def attempt_stats(
    attempts: Sequence[Attempt], fallbacks: Sequence[str], remedies: Sequence[Applied]
) -> tuple[dict[str, Any], ...]:
    """Each attempt's span, steps and rate, and the fallback or remedy it ran with."""
    out: list[dict[str, Any]] = []
    for a in attempts:
        applied = [redact_text(f) for f in fallbacks[: a.number - 1] if f]  # a fallback may carry a token
        applied += [r.text for r in remedies if r.attempt == a.number]
        rate = a.detector.step_rate()
        out.append(
            {
                "attempt": a.number,
                "started_at": round(a.started_at, 3),
                "ended_at": None if a.ended_at is None else round(a.ended_at, 3),
                "first_step": a.steps.first_step,
                "last_step": a.steps.last_step,
                "steps_per_s": round(rate, 4) if rate else None,
                "applied": "; ".join(applied),
                "exit_code": a.exit_code,
            }
        )
    return tuple(out)


def remedy_outcomes(attempts: Sequence[Attempt], remedies: Sequence[Applied]) -> tuple[dict[str, Any], ...]:
    """Each remedy applied, and what it did: past the old stall or not, and at what step rate."""
    out = []
    for r in remedies:
        row: dict[str, Any] = {"attempt": r.attempt, "cause": r.cause, "remedy": r.remedy, "applied": r.text}
        if r.why:
            row["why"] = r.why
        if 1 < r.attempt <= len(attempts):
            now_a, before = attempts[r.attempt - 1], attempts[r.attempt - 2]
            now_max, before_max = now_a.steps.max_step, before.steps.max_step
            past = now_max > before_max if now_max is not None and before_max is not None else now_a.steps.progressed
            rate = now_a.detector.step_rate()
            prev = before.detector.step_rate()
            row.update(
                progressed_past=past,
                steps_per_s=round(rate, 3) if rate else None,
                rate_vs_previous=round(rate / prev, 3) if rate and prev else None,
            )
        out.append(row)
    return tuple(out)
