"""Human output of `hangwatch probe-data`: a table that fills in while cells run, then the advice."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from hangwatch.records.probe import Cell, CellStatus, ProbeResult

STYLE = {
    CellStatus.OK: "green",
    CellStatus.HUNG: "bold red",
    CellStatus.CRASHED: "bold red",
    CellStatus.RUNNING: "yellow",
    CellStatus.PENDING: "dim",
}


def _cell_row(c: Cell) -> list[str]:
    f = c.finding
    cause = f.cause if f else ""
    w = f.where if f else None
    at = f" at {(w.file or '').rsplit('/', 1)[-1]}:{w.line}" if w is not None and w.file else ""
    return [
        escape(c.label()),
        f"[{STYLE[c.status]}]{c.status.value}[/]",
        "" if c.samples_per_s is None else f"{c.samples_per_s:.1f}",
        "" if c.first_batch_s is None else f"{c.first_batch_s:.2f}",
        "" if c.peak_rss_mb is None else f"{c.peak_rss_mb:.0f}",
        escape(f"{cause}{at}"),
    ]


def probe_view(result: ProbeResult) -> Group:
    """The probe as a rich renderable (items line and cell table), live or final."""
    items = result.items
    head = Text(
        f"items: {items.checked} read, {len(items.failed)} failed, {len(items.hung)} hung, "
        f"{len(items.slow)} slow" + (f" (median {items.median_s * 1000:.2f} ms)" if items.median_s else "")
    )
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("DataLoader", "status", "samples/s", "first batch s", "peak MB", "finding"):
        table.add_column(col)
    for c in [result.baseline, *result.cells]:
        table.add_row(*_cell_row(c))
    return Group(head, table)


def render_probe(result: ProbeResult, stream: TextIO) -> None:
    """The final probe report with its recommendation."""
    console = Console(file=stream, highlight=False, width=None if stream.isatty() else 160)
    console.print(probe_view(result))
    for kind in ("failed", "hung"):
        for it in getattr(result.items, kind):
            w = it.get("where") or {}
            detail = it.get("error") or (f"{w.get('file')}:{w.get('line')} in {w.get('function')}" if w else "")
            console.print(f"[red]index {it['index']} {kind}[/]: {escape(str(detail))}")
    rec = result.recommendation()
    if rec is None:
        console.print("[bold red]No configuration was stable.[/] Fix the items and cells reported above first.")
        return
    best, speedup = rec
    kw = best.loader_kwargs(0)
    kw.pop("batch_size")
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    console.print(
        f"[bold]Recommended:[/] DataLoader(dataset, batch_size=..., {escape(args)})  "
        f"# {best.samples_per_s:.1f} samples/s" + (f", {speedup:.2f}x num_workers=0" if speedup else "")
    )
