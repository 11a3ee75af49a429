"""Human output of an incident (rich): verdict and root cause first, then the process tree."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from hangwatch.incident import Incident, ProcessRecord, Verdict
from hangwatch.report.gpu_text import gpu_lines

VERDICT_STYLE = {Verdict.HUNG: "bold red", Verdict.STOPPED: "bold red", Verdict.CRASHED: "bold red",
                 Verdict.SLOW: "bold yellow", Verdict.WAITING: "bold yellow", Verdict.PROGRESSING: "bold green"}


def _proc_line(p: ProcessRecord) -> str:
    rank = f" rank {p.rank}" if p.rank is not None else ""
    cpu = "?" if p.cpu_percent is None else f"{p.cpu_percent:.0f}%"
    return f"[bold]{p.role}[/]{rank} pid {p.pid}  {p.state}  {cpu} CPU  {escape(p.where_text())}"


def render_text(incident: Incident, stream: TextIO, color: bool | None = None) -> None:
    """An incident for a terminal or a log: verdict, root cause, evidence, fix, the process tree."""
    wide = None if stream.isatty() else 200  # a log or a pipe: do not crop the tree at 80 columns
    console = Console(file=stream, force_terminal=color, no_color=color is False, highlight=False,
                      soft_wrap=True, width=wide)
    root = incident.root_cause
    style = VERDICT_STYLE.get(incident.verdict, "bold")
    title = f"[{style}]{incident.verdict.value.upper()}[/]"
    if root is not None:
        title += f"  {root.cause}  (confidence {root.confidence:.2f})"
    console.print(title)
    if root is not None:
        console.print(f"  {escape(root.summary)}")
        w = root.where
        if w is not None and w.file:
            console.print(f"  [bold]at {escape(w.location())}[/]  in {escape(w.function or '?')} ({w.owner()})")
            if w.code:
                console.print(f"      {w.line} | {escape(w.code)}")
        if root.evidence:
            console.print("  Evidence:")
            for e in root.evidence:
                console.print(f"    - {escape(e)}")
        if root.fix:
            console.print("  Fix:")
            for i, fx in enumerate(root.fix, 1):
                console.print(f"    {i}. {escape(fx)}")
    others = incident.findings[1:]
    if others:
        console.print("  Also considered: " + "; ".join(f"{f.cause} ({f.confidence:.2f})" for f in others[:4]))
    console.print()
    window = f" over {incident.window_seconds:.1f} s" if incident.window_seconds else ""
    console.print(f"Processes{window}:")
    by_parent: dict[int, list[ProcessRecord]] = {}
    pids = {p.pid for p in incident.processes}
    for p in incident.processes:
        by_parent.setdefault(p.ppid if p.ppid in pids else -1, []).append(p)

    def add(node: Tree, p: ProcessRecord, depth: int) -> None:
        child = node.add(_proc_line(p))
        if depth < 16:
            for c in by_parent.get(p.pid, []):
                add(child, c, depth + 1)

    tree = Tree("job", hide_root=True)
    for p in by_parent.get(-1, []):
        add(tree, p, 0)
    console.print(tree)
    for line in gpu_lines(incident):
        console.print(escape(line))
    for n in incident.notes:
        console.print(f"[yellow]note:[/] {escape(n)}")
