"""Seeing runs: `hangwatch ls`, `hangwatch watch` (in a real terminal, tmux), the HTML page, ETA and
budget. Every run here is a real one made by `hangwatch run`.

Here the tests that start no process; those that do are in tests/e2e/test_runs.py.
"""

from __future__ import annotations

from hangwatch.records.incident import FrameRecord, ProcessRecord, ThreadRecord
from hangwatch.report.ranks import leaves, merged_lines, rank_ranges
from hangwatch.supervise.books.budget import BudgetWatch


def _frames(*names: str) -> tuple[FrameRecord, ...]:
    return tuple(FrameRecord(n, f"/job/{f}", line) for n, f, line in (x.split(":") for x in names))


def test_merged_stacks_stay_readable_at_64_ranks():
    common = ["<module>:train.py:120", "train:train.py:95"]
    procs = []
    for rank in range(64):
        inner = ["load_shard:data.py:41"] if rank == 1 else ["all_reduce:train.py:88", "wait:distributed_c10d.py:2500"]
        frames = tuple(reversed(_frames(*(common + inner))))  # innermost first, as captured
        procs.append(
            ProcessRecord(
                pid=1000 + rank,
                ppid=1,
                role="rank",
                rank=rank,
                state="S",
                cpu_percent=0.0,
                cmdline="python train.py",
                threads=(ThreadRecord(1000 + rank, "main", True, frames),),
            )
        )
    from hangwatch.report.ranks import rank_stacks

    stacks = rank_stacks(procs)
    assert leaves(stacks) == "ranks 0,2-63 in wait (distributed_c10d.py:2500) | rank 1 in load_shard (data.py:41)"
    lines = merged_lines(stacks)
    assert len(lines) == 5  # two shared frames once, then one branch per group
    assert lines[0] == (0, "", "<module> (train.py:120)")
    assert (lines[2][1], lines[4][1]) == ("ranks 0,2-63", "rank 1")
    assert rank_ranges({5, 1, 2, 3, 9}) == "1-3,5,9"


def test_budget_stop_waits_for_the_next_checkpoint():
    w = BudgetWatch(budget=1.0, stop=True, hold_s=0.0)
    w.phase("checkpoint", 10.0)
    w.phase(None, 12.0)  # a checkpoint was seen: stop after the next one
    from hangwatch.records.run import RunState, RunSummary

    over = RunSummary(
        command=("x",),
        run_dir="d",
        state=RunState.PROGRESSING,
        attempts=1,
        exit_code=None,
        started_at=0.0,
        ended_at=None,
        wall_seconds=60,
        last_step=5,
        incidents=0,
        stalled_seconds=0,
        goodput=1.0,
        cost_per_hour=3600,
        cost_usd=0.9,
        projected_cost_usd=0.5,
    )
    assert w.warning(over, 20.0) is not None and w.warning(over, 21.0) is None
    assert not w.stop_now(25.0, started_at=0.0)
    w.phase("checkpoint", 30.0)
    assert not w.stop_now(31.0, started_at=0.0)
    w.phase(None, 33.0)
    assert w.stop_now(33.5, started_at=0.0)
