"""Which remedy a restart applies when several could: the first of the cause's ladder (most likely to
fix it first) that still finishes the run by --deadline and within --budget, judged by each remedy's
step rate against the current one. Pure: the supervisor hands it the run's figures.

Rates, best first: measured in this run (an earlier attempt that ran with the remedy, against the one
before it), then a ``hangwatch probe-data --json`` report saved as ``probe.json`` in the run directory
(the DataLoader settings each remedy comes to, against the fastest stable one), then hangwatch.toml's
[remedy_rates], then DEFAULT_RATES (documented guesses).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hangwatch.records.values import frozen
from hangwatch.report.units import duration, usd

# A remedy's step rate as a fraction of the rate without it (docs/restarts.md#remedies-chosen-by-deadline-and-budget).
DEFAULT_RATES: dict[str, float] = {
    "spawn": 1.0,
    "forkserver": 1.0,
    "no_persistent_workers": 0.97,
    "omp1": 0.9,
    "fewer_workers": 0.8,
    "no_compile": 0.7,
    "workers0": 0.6,
}


@frozen
class Outlook:
    """One remedy, projected: its rate factor (and where it came from), finish time, total cost."""

    remedy: str
    factor: float
    source: str  # measured | hangwatch.toml | default
    finish_at: float | None
    total_usd: float | None

    def text(self, deadline: float | None, budget: float | None) -> str:
        """``workers0: 0.60x the rate (default), finish Wed 14:20, 2.1 d before the deadline, $3.10 total``."""
        factor = f"{self.factor:.2f}" if self.factor >= 0.1 else f"{self.factor:.1g}"  # 0.001x, never 0.00x
        parts = [f"{self.remedy}: {factor}x the rate ({self.source})"]
        if self.finish_at is not None:
            parts.append(f"finish {time.strftime('%a %H:%M', time.localtime(self.finish_at))}")
            if deadline is not None:
                slack = deadline - self.finish_at
                parts.append(f"{duration(abs(slack))} {'before' if slack >= 0 else 'after'} the deadline")
        if self.total_usd is not None:
            parts.append(
                f"{usd(self.total_usd)} in all"
                + (
                    f" ({usd(self.total_usd - budget)} over budget)"
                    if budget is not None and self.total_usd > budget
                    else ""
                )
            )
        return ", ".join(parts)

    def meets(self, deadline: float | None, budget: float | None) -> bool:
        """Within the deadline and the budget (an unknown projection meets nothing it is judged by)."""
        if deadline is not None and (self.finish_at is None or self.finish_at > deadline):
            return False
        return budget is None or (self.total_usd is not None and self.total_usd <= budget)


@frozen
class Choice:
    """The remedy picked, and why, in words."""

    remedy: str
    why: str


def probe_rates(report: Mapping[str, Any]) -> dict[str, float]:
    """Rate factors from a ``hangwatch.probe/1`` report: each remedy's DataLoader settings (their best
    stable cell; num_workers=0 is the baseline) against the fastest stable cell."""
    cells = [
        c
        for c in report.get("cells", ())
        if isinstance(c, dict)
        and c.get("status") == "ok"
        and isinstance(c.get("samples_per_s"), int | float)
        and c["samples_per_s"] > 0
    ]
    if not cells:
        return {}
    best = max(c["samples_per_s"] for c in cells)

    def top(*tests: Callable[[dict[str, Any]], bool]) -> float | None:
        rates = [c["samples_per_s"] for c in cells if all(t(c) for t in tests)]
        return max(rates) / best if rates else None

    baseline = (report.get("baseline") or {}).get("samples_per_s")
    out = {
        "spawn": top(lambda c: c.get("multiprocessing_context") == "spawn"),
        "forkserver": top(lambda c: c.get("multiprocessing_context") == "forkserver"),
        "no_persistent_workers": top(lambda c: not c.get("persistent_workers")),
        "fewer_workers": top(lambda c: int(c.get("num_workers") or 0) <= 2),
        "workers0": baseline / best if isinstance(baseline, int | float) and baseline > 0 else None,
    }
    return {k: round(v, 3) for k, v in out.items() if v is not None}


def rate_factor(
    remedy: str,
    measured: Mapping[str, float],
    configured: Mapping[str, float],
    probed: Mapping[str, float] | None = None,
) -> tuple[float, str]:
    """A remedy's rate factor and where it came from."""
    if remedy in measured:
        return measured[remedy], "measured"
    if probed and remedy in probed:
        return probed[remedy], "probe-data"
    if remedy in configured:
        return configured[remedy], "hangwatch.toml"
    return DEFAULT_RATES.get(remedy, 1.0), "default"


def choose(
    candidates: Sequence[str],
    *,
    now: float,
    steps_left: int | None,
    rate: float | None,
    spent_usd: float | None,
    cost_per_hour: float | None,
    deadline: float | None,
    budget: float | None,
    measured: Mapping[str, float],
    configured: Mapping[str, float],
    probed: Mapping[str, float] | None = None,
) -> Choice | None:
    """The remedy to apply from ``candidates`` (the cause's untried rungs, in order); None without any."""
    if not candidates:
        return None
    if deadline is None and budget is None:
        return Choice(candidates[0], "")
    outlooks = []
    for name in candidates:
        factor, source = rate_factor(name, measured, configured, probed)
        seconds = steps_left / (rate * factor) if steps_left is not None and rate and factor > 0 else None
        finish = now + seconds if seconds is not None else None
        total = (spent_usd or 0.0) + seconds / 3600 * cost_per_hour if seconds is not None and cost_per_hour else None
        outlooks.append(Outlook(name, factor, source, finish, total))
    for o in outlooks:
        if o.meets(deadline, budget):
            skipped = [x.text(deadline, budget) for x in outlooks[: outlooks.index(o)]]
            why = o.text(deadline, budget) + (f"; not {'; '.join(skipped)}" if skipped else "")
            return Choice(o.remedy, why)
    what = " and ".join(
        w for w, on in (("the deadline", deadline is not None), ("the budget", budget is not None)) if on
    )
    return Choice(
        outlooks[0].remedy, f"no remedy meets {what}: " + "; ".join(o.text(deadline, budget) for o in outlooks)
    )
