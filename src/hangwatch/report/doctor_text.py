"""Human output of `hangwatch doctor`."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hangwatch.records.doctor import Check, CheckStatus

STYLE = {CheckStatus.OK: "green", CheckStatus.WARN: "yellow", CheckStatus.FAIL: "bold red", CheckStatus.SKIP: "dim"}


def render_doctor(checks: list[Check], stream: TextIO) -> None:
    """The checks as a table, then the counts."""
    console = Console(file=stream, highlight=False, width=None if stream.isatty() else 160)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("check", "status", "value", "what it means / fix"):
        table.add_column(col, overflow="fold")
    for c in checks:
        shown = c.fix and c.status in (CheckStatus.WARN, CheckStatus.FAIL)
        text = escape(c.summary) + (f"\n[dim]fix: {escape(c.fix)}[/]" if shown else "")
        table.add_row(c.id, f"[{STYLE[c.status]}]{c.status.value}[/]", escape(c.value), text)
    console.print(table)
    counts = {s: sum(c.status == s for c in checks) for s in STYLE}
    console.print(", ".join(f"{n} {s.value}" for s, n in counts.items() if n))
