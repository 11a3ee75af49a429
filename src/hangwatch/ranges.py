"""Sets of ranks or nodes as short text (``0,2-7``): one vocabulary for diagnoses and reports."""

from __future__ import annotations

from collections.abc import Iterable


def rank_ranges(numbers: Iterable[int]) -> str:
    """``0,2-7``: sorted, consecutive runs collapsed (256 ranks stay one short line)."""
    out: list[str] = []
    nums = sorted(set(numbers))
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(out)


def ranks_label(ranks: Iterable[int], noun: str = "rank") -> str:
    """``rank 1`` or ``ranks 0,2-7`` (``node 3`` or ``nodes 0-31`` with ``noun="node"``)."""
    nums = set(ranks)
    return (f"{noun} " if len(nums) == 1 else f"{noun}s ") + rank_ranges(nums)
