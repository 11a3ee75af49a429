"""How durations and money read, the same in the `ls` table, the live view, the HTML page and the
budget warning."""

from __future__ import annotations


def usd(x: float) -> str:
    """``$23.40``; four decimals under a dollar, where cents would round small runs to $0.00."""
    return f"${x:,.2f}" if abs(x) >= 1 or x == 0 else f"${x:.4f}"


def duration(seconds: float | None) -> str:
    """``3 s``, ``4 m``, ``2.5 h``, ``3.1 d``; ``-`` for None."""
    if seconds is None:
        return "-"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} m"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def money(x: float | None) -> str:
    """``$1.23``; ``-`` for None."""
    return "-" if x is None else usd(x)
