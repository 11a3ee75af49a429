"""report.md: the same incident, as Markdown."""

from __future__ import annotations

import time
from typing import TextIO

from hangwatch.records.incident import Finding, Incident
from hangwatch.report.gpu_text import gpu_lines
from hangwatch.report.ranks import RankGroup, display_rows, leaves, merged_lines, rank_stacks


def _root_md(incident: Incident, root: Finding, out: TextIO) -> None:
    """The root cause: summary, place, proof, the wait chain, evidence, fix."""
    out.write(f"\n## Root cause: `{root.cause}` (confidence {root.confidence:.2f})\n\n{root.summary}\n\n")
    w = root.where
    if w is not None and w.file:
        out.write(f"**Where:** `{w.location()}` in `{w.function}` ({w.owner()})\n\n")
        if w.code:
            out.write(f"```python\n{w.line}: {w.code}\n```\n\n")
    if root.proof is not None:
        out.write(f"**Proof of {root.proof.kind.value}:** {root.proof.fact}\n\n")
    chain = incident.root_chain()
    if chain:
        out.write("**Wait chain**\n\n```\n" + "\n".join(chain) + "\n```\n\n")
    if root.evidence:
        out.write("**Evidence**\n\n" + "".join(f"- {e}\n" for e in root.evidence) + "\n")
    if root.fix:
        out.write("**Fix**\n\n" + "".join(f"{i}. {f}\n" for i, f in enumerate(root.fix, 1)) + "\n")


def render_markdown(incident: Incident, out: TextIO) -> None:
    """report.md of an incident."""
    root = incident.root_cause
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(incident.detected_at))
    out.write(f"# hangwatch incident: {incident.verdict.value}\n\n")
    out.write(f"- detected: {when}\n- attempt: {incident.attempt}\n- action: {incident.action.value}\n")
    if incident.remedy:
        out.write(f"- next attempt applies: {incident.remedy}\n")
    if incident.last_progress is not None:
        lp = incident.last_progress
        ago = incident.detected_at - lp.at
        out.write(f"- last progress: step {lp.step} ({lp.source}), {ago:.0f} s before detection\n")
    if root is not None:
        _root_md(incident, root, out)
    if len(incident.findings) > 1:
        out.write("## Also considered\n\n")
        for f in incident.findings[1:]:
            out.write(f"- `{f.cause}` ({f.confidence:.2f}): {f.summary}\n")
        out.write("\n")
    _collectives(incident, out)
    stacks = rank_stacks(incident.processes)
    if len(stacks) >= 2:
        merged = "\n".join(
            "  " * depth + (f"[{label}] " if label else "") + text for depth, label, text in merged_lines(stacks)
        )
        out.write(f"## Ranks ({len(stacks)})\n\n`{leaves(stacks)}`\n\n```\n{merged}\n```\n\n")
    if incident.processes:
        out.write("## Processes\n\n| pid | ppid | role | rank | state | CPU % | top frame |\n")
        out.write("|---|---|---|---|---|---|---|\n")
        for _, p in display_rows(incident.processes, keep=incident.finding_pids()):
            if isinstance(p, RankGroup):
                out.write(f"| {len(p.members)} processes | | {p.role} | | | | {p.text()} |\n")
                continue
            main = p.main_thread
            top = main.frames[0] if main and main.frames else None
            frame = f"`{top.function}` ({top.file.rsplit('/', 1)[-1]}:{top.line})" if top else ""
            frame += f"; {p.holds}" if p.holds else ""
            cpu = "" if p.cpu_percent is None else f"{p.cpu_percent:.0f}"
            rank = "" if p.rank is None else str(p.rank)
            out.write(f"| {p.pid} | {p.ppid} | {p.role} | {rank} | {p.state} | {cpu} | {frame} |\n")
    section = gpu_lines(incident)
    if section:
        out.write("\n## GPUs and kernel log\n\n```\n" + "\n".join(section) + "\n```\n")
    for n in incident.notes:
        out.write(f"\n> note: {n}\n")


def _collectives(incident: Incident, out: TextIO) -> None:
    """The per-rank collectives table (torch's flight recorder), ranks merged into ranges."""
    if not incident.collectives:
        return
    out.write(
        "## Collectives (torch's flight recorder)\n\n| ranks | group | last entered | last completed | state |\n"
        "|---|---|---|---|---|\n"
    )
    for c in incident.collectives:
        out.write(f"| {c.ranks} | {c.group} | `{c.last_entered}` | {c.last_completed} | {c.state} |\n")
    out.write("\n")
