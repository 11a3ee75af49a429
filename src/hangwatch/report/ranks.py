"""Merged stacks of a job's ranks: frames all ranks share shown once, and where they part, which
ranks are where (``ranks 0,2-7 in all_reduce (train.py:88) | rank 1 in load_shard (data.py:41)``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field

from hangwatch.ranges import rank_ranges, ranks_label
from hangwatch.records.incident import FrameRecord, ProcessRecord
from hangwatch.records.values import frozen, mutable

__all__ = ["rank_ranges", "ranks_label"]  # re-exported: the report's callers import them from here


@mutable
class StackNode:
    """One frame in the merged tree, with the ranks whose stacks pass through it."""

    frame: FrameRecord | None
    ranks: set[int] = field(default_factory=set)
    children: dict[tuple[str, str, int], StackNode] = field(default_factory=dict)


def rank_stacks(processes: tuple[ProcessRecord, ...] | list[ProcessRecord]) -> dict[int, tuple[FrameRecord, ...]]:
    """Each rank's main-thread stack, outermost frame first (one process per rank: the first seen)."""
    out: dict[int, tuple[FrameRecord, ...]] = {}
    for p in processes:
        t = p.main_thread
        if p.rank is None or p.rank in out or t is None:
            continue
        out[p.rank] = tuple(reversed(t.frames))
    return out


def merge(stacks: dict[int, tuple[FrameRecord, ...]]) -> StackNode:
    """The prefix tree of the stacks."""
    root = StackNode(None, set(stacks))
    for rank, frames in stacks.items():
        node = root
        for f in frames:
            key = (f.function, f.file, f.line)
            node = node.children.setdefault(key, StackNode(f))
            node.ranks.add(rank)
    return root


def leaves(stacks: dict[int, tuple[FrameRecord, ...]]) -> str:
    """The one-line answer: each group of ranks and the innermost frame it waits in, biggest group first."""
    groups: dict[str, set[int]] = {}
    for rank, frames in stacks.items():
        groups.setdefault(frames[-1].short() if frames else "(no Python stack)", set()).add(rank)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), min(kv[1])))
    return " | ".join(f"{ranks_label(r)} in {where}" for where, r in ordered)


def merged_lines(stacks: dict[int, tuple[FrameRecord, ...]]) -> list[tuple[int, str, str]]:
    """(depth, ranks label or "" when all ranks of the parent are here, frame text) for each node:
    a chain that all ranks share prints once, a fork prints a branch per group."""
    out: list[tuple[int, str, str]] = []

    def walk(node: StackNode, depth: int, parent: set[int]) -> None:
        for child in sorted(node.children.values(), key=lambda c: (-len(c.ranks), min(c.ranks))):
            label = "" if child.ranks == parent else ranks_label(child.ranks)
            assert child.frame is not None  # noqa: S101 - only the root has no frame
            out.append((depth, label, child.frame.short()))
            walk(child, depth + 1 if (label or len(node.children) > 1) else depth, child.ranks)

    root = merge(stacks)
    walk(root, 0, root.ranks)
    return out


# --- the process tree with many ranks: groups, not one row per rank ------------------------------------------
GROUP_AT = 8  # more sibling ranks than this are shown as groups of ranks that are in the same place
ODD_STATES = ("D", "T", "t", "Z")  # a process in one of these states is shown on its own row


@frozen
class RankGroup:
    """Sibling rank processes in the same role, state and place, shown as one row."""

    members: tuple[ProcessRecord, ...]
    beneath: tuple[tuple[str, int], ...]  # (role, count) of every process below the members

    @property
    def role(self) -> str:
        """The members' role."""
        return self.members[0].role

    def text(self) -> str:
        """``ranks 0,2-255 (255 processes, pids 1000-1255), S, 0-2% CPU, in wait (c10d.py:2500); beneath: ...``."""
        p = self.members[0]
        pids = sorted(m.pid for m in self.members)
        cpus = [m.cpu_percent for m in self.members if m.cpu_percent is not None]
        cpu = (
            "?"
            if not cpus
            else f"{min(cpus):.0f}%"
            if round(min(cpus)) == round(max(cpus))
            else f"{min(cpus):.0f}-{max(cpus):.0f}%"
        )
        below = ", ".join(f"{n} {role}" for role, n in self.beneath)
        ranks = frozenset(m.rank for m in self.members if m.rank is not None)
        return (
            f"{ranks_label(ranks)} ({len(pids)} processes, pids {pids[0]}-{pids[-1]}), {p.state}, {cpu} CPU, "
            f"{p.where_text()}" + (f"; beneath them: {below}" if below else "")
        )


Row = tuple[int, "ProcessRecord | RankGroup"]  # depth, and one process or a group of ranks


def _grouped(
    children: list[ProcessRecord],
    shown: Callable[[ProcessRecord], bool],
    below: Callable[[ProcessRecord], list[ProcessRecord]],
) -> list[ProcessRecord | RankGroup]:
    """Siblings as shown: each as itself up to GROUP_AT ranks; beyond, the ranks not ``shown`` grouped by role,
    state and place (a group of one stays a process), each group with the roles of what runs below its members."""
    ranked = [c for c in children if c.rank is not None and not shown(c)]
    if len(ranked) <= GROUP_AT:
        return list(children)
    groups: dict[tuple[str, str, str], list[ProcessRecord]] = {}
    for c in ranked:
        groups.setdefault((c.role, c.state, c.where_text()), []).append(c)
    items: list[ProcessRecord | RankGroup] = [c for c in children if c.rank is None or shown(c)]
    for members in sorted(groups.values(), key=lambda m: (-len(m), min(x.rank or 0 for x in m))):
        if len(members) == 1:
            items.append(members[0])
            continue
        roles: dict[str, int] = {}
        for m in members:
            for d in below(m):
                roles[d.role] = roles.get(d.role, 0) + 1
        items.append(RankGroup(tuple(members), tuple(sorted(roles.items(), key=lambda kv: -kv[1]))))
    return items


def display_rows(
    processes: tuple[ProcessRecord, ...] | list[ProcessRecord], max_depth: int = 32, keep: frozenset[int] = frozenset()
) -> list[Row]:
    """The process tree, depth first, with sibling ranks beyond GROUP_AT grouped by role, state and
    place (a group of one stays a process, with its own subtree): 256 ranks read as a few rows. A rank
    whose subtree holds a pid in ``keep`` (a finding's) or a process stopped, in D or a zombie is
    never grouped: what explains the hang is always shown."""
    pids = {p.pid for p in processes}
    kids: dict[int, list[ProcessRecord]] = {}
    for p in processes:
        kids.setdefault(p.ppid if p.ppid in pids else -1, []).append(p)

    def below(p: ProcessRecord, depth: int = 0) -> list[ProcessRecord]:
        out = []
        for c in kids.get(p.pid, ()):
            out.append(c)
            if depth < max_depth:
                out.extend(below(c, depth + 1))
        return out

    def shown(p: ProcessRecord) -> bool:
        return any(q.pid in keep or q.state[:1] in ODD_STATES for q in (p, *below(p)))

    rows: list[Row] = []

    def walk(parent: int, depth: int) -> None:
        for item in _grouped(kids.get(parent, []), shown, below):
            rows.append((depth, item))
            if isinstance(item, ProcessRecord) and depth < max_depth:
                walk(item.pid, depth + 1)

    walk(-1, 0)
    return rows
