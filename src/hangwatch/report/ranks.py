"""Merged stacks of a job's ranks: frames all ranks share shown once, and where they part, which
ranks are where (``ranks 0,2-7 in all_reduce (train.py:88) | rank 1 in load_shard (data.py:41)``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hangwatch.incident import FrameRecord, ProcessRecord


def rank_ranges(ranks: frozenset[int] | set[int] | list[int]) -> str:
    """``0,2-7``: sorted, consecutive runs collapsed (64 ranks stay one short line)."""
    out: list[str] = []
    nums = sorted(ranks)
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(out)


def ranks_label(ranks: frozenset[int] | set[int]) -> str:
    """``rank 1`` or ``ranks 0,2-7``."""
    return ("rank " if len(ranks) == 1 else "ranks ") + rank_ranges(ranks)


@dataclass
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
