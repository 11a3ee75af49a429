"""Human output of an incident (rich): verdict and root cause first, then the process tree."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from hangwatch.diagnose.signatures import is_library_file, is_stdlib_file
from hangwatch.diagnose.views import own_frames
from hangwatch.incident import FrameRecord, Incident, ProcessRecord, Verdict

VERDICT_STYLE = {Verdict.HUNG: "bold red", Verdict.STOPPED: "bold red", Verdict.CRASHED: "bold red",
                 Verdict.SLOW: "bold yellow", Verdict.PROGRESSING: "bold green"}


def _short(f: FrameRecord) -> str:
    return f"{f.function} ({f.file.rsplit('/', 1)[-1]}:{f.line})"


def _main_thread_where(p: ProcessRecord) -> str:
    """The main thread's innermost non-stdlib frame, led by the innermost user frame when they differ."""
    main = next((t for t in p.threads if t.tid == p.pid), p.threads[0] if p.threads else None)
    if main is None or not main.frames:
        return "no Python stack"
    frames = own_frames(main.frames)  # a forked child's copy of its parent's frames says nothing
    if not frames:
        return _short(main.frames[0])
    inner = next((f for f in frames if not is_stdlib_file(f.file)), frames[0])
    if not is_library_file(inner.file):
        return _short(inner)
    user = next((f for f in frames if not is_library_file(f.file)), None)
    return _short(inner) if user is None else f"{_short(user)} > {_short(inner)}"


def _proc_line(p: ProcessRecord) -> str:
    rank = f" rank {p.rank}" if p.rank is not None else ""
    cpu = "?" if p.cpu_percent is None else f"{p.cpu_percent:.0f}%"
    where = _main_thread_where(p)
    return f"[bold]{p.role}[/]{rank} pid {p.pid}  {p.state}  {cpu} CPU  {escape(where)}"


def render_text(incident: Incident, stream: TextIO, color: bool | None = None) -> None:
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
            rank = f", rank {w.rank}" if w.rank is not None else ""
            console.print(f"  [bold]at {escape(w.file)}:{w.line}[/]  in {escape(w.function or '?')} "
                          f"(pid {w.pid}{rank})")
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
    for n in incident.notes:
        console.print(f"[yellow]note:[/] {escape(n)}")
