"""Human output of an incident (rich): verdict and root cause first, then the process tree."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from hangwatch.records.incident import Finding, Incident, ProcessRecord, Verdict
from hangwatch.report.gpu_text import gpu_lines
from hangwatch.report.ranks import RankGroup, display_rows, leaves, merged_lines, rank_stacks

MERGED_LINES_SHOWN = 40  # of the merged rank stacks, in a terminal (the page shows them all)

VERDICT_STYLE = {
    Verdict.HUNG: "bold red",
    Verdict.STOPPED: "bold red",
    Verdict.CRASHED: "bold red",
    Verdict.SLOW: "bold yellow",
    Verdict.WAITING: "bold yellow",
    Verdict.PROGRESSING: "bold green",
}


def _proc_line(p: ProcessRecord) -> str:
    rank = f" rank {p.rank}" if p.rank is not None else ""
    cpu = "?" if p.cpu_percent is None else f"{p.cpu_percent:.0f}%"
    holds = f"; {escape(p.holds)}" if p.holds else ""
    return f"[bold]{p.role}[/]{rank} pid {p.pid}  {p.state}  {cpu} CPU  {escape(p.where_text())}{holds}"


def _root_lines(console: Console, incident: Incident, root: Finding) -> None:
    """The root cause: summary, place, proof, the wait chain, evidence, fix."""
    console.print(f"  {escape(root.summary)}")
    w = root.where
    if w is not None and w.file:
        console.print(f"  [bold]at {escape(w.location())}[/]  in {escape(w.function or '?')} ({w.owner()})")
        if w.code:
            console.print(f"      {w.line} | {escape(w.code)}")
    if root.proof is not None:
        console.print(f"  Proof of {root.proof.kind.value}: {escape(root.proof.fact)}")
    chain = incident.root_chain()
    if chain:
        console.print("  Wait chain:")
        for line in chain:
            console.print(f"    {escape(line)}")
    if root.evidence:
        console.print("  Evidence:")
        for e in root.evidence:
            console.print(f"    - {escape(e)}")
    if root.fix:
        console.print("  Fix:")
        for i, fx in enumerate(root.fix, 1):
            console.print(f"    {i}. {escape(fx)}")


def render_text(incident: Incident, stream: TextIO, color: bool | None = None) -> None:
    """An incident for a terminal or a log: verdict, root cause, evidence, fix, the process tree."""
    wide = None if stream.isatty() else 200  # a log or a pipe: do not crop the tree at 80 columns
    console = Console(
        file=stream, force_terminal=color, no_color=color is False, highlight=False, soft_wrap=True, width=wide
    )
    root = incident.root_cause
    style = VERDICT_STYLE.get(incident.verdict, "bold")
    title = f"[{style}]{incident.verdict.value.upper()}[/]"
    if root is not None:
        title += f"  {root.cause}  (confidence {root.confidence:.2f})"
    console.print(title)
    if root is not None:
        _root_lines(console, incident, root)
    others = incident.findings[1:]
    if others:
        console.print("  Also considered: " + "; ".join(f"{f.cause} ({f.confidence:.2f})" for f in others[:4]))
    console.print()
    window = f" over {incident.window_seconds:.1f} s" if incident.window_seconds else ""
    if incident.collectives:
        console.print("Collectives (torch's flight recorder):")
        for c in incident.collectives:
            console.print(
                f"  {escape(c.ranks):<14} {escape(c.group):<12} last entered {escape(c.last_entered)}, "
                f"completed {escape(c.last_completed)}: {escape(c.state)}"
            )
        console.print()
    stacks = rank_stacks(incident.processes)
    if len(stacks) >= 2:
        console.print(f"Ranks ({len(stacks)}): {escape(leaves(stacks))}")
        lines = merged_lines(stacks)
        for depth, label, text in lines[:MERGED_LINES_SHOWN]:
            console.print("  " + "  " * depth + (f"[bold]\\[{escape(label)}][/] " if label else "") + escape(text))
        if len(lines) > MERGED_LINES_SHOWN:
            console.print(f"  ... {len(lines) - MERGED_LINES_SHOWN} more lines in report.html")
        console.print()
    console.print(f"Processes{window}:")
    tree = Tree("job", hide_root=True)
    at: dict[int, Tree] = {-1: tree}
    for depth, item in display_rows(incident.processes, max_depth=16, keep=incident.finding_pids()):
        line = f"[bold]{escape(item.text())}[/]" if isinstance(item, RankGroup) else _proc_line(item)
        at[depth] = at.get(depth - 1, tree).add(line)
    console.print(tree)
    for line in gpu_lines(incident):
        console.print(escape(line))
    for n in incident.notes:
        console.print(f"[yellow]note:[/] {escape(n)}")
