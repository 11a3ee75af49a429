"""Bench: pairing 256 ranks' collectives by call site, 2,000 recorded entries each (torch's default buffer).

Synthetic recorders shaped like a training job's: each step a forward broadcast, backward all_reduces from two
lines, an optimizer all_reduce, a barrier every 50 steps. Three jobs: healthy (one rank one collective ahead, as
ranks always are), one rank that added a collective 1,900 entries back (the pairs one off since: the longest
comparison), and one that skipped one. For each: the recorders' analysis with the pairing (``analyze``, as a hang
runs it) against the same analysis pairing by sequence number only (the pairing switched off), in this run.
Target: <= 1 s for 256 ranks.

    python bench/alignment.py [--ranks 256] [--entries 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from hangwatch.diagnose import collectives  # noqa: E402 - after the path above
from hangwatch.diagnose.collectives import GroupView, Pending, RankCollectives, analyze  # noqa: E402

STEP = (
    ("broadcast", "/job/train.py:41", "[[1024]]"),
    ("all_reduce", "/job/train.py:58", "[[4194304]]"),
    ("all_reduce", "/job/train.py:58", "[[1048576]]"),
    ("all_reduce", "/job/train.py:63", "[[1]]"),
)
BARRIER = ("barrier", "/job/train.py:70", "[]")
EXTRA = ("all_reduce", "/job/eval.py:12", "[[1]]")


def _calls(n: int) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    step = 0
    while len(out) < n:
        out.extend(STEP)
        step += 1
        if step % 50 == 0:
            out.append(BARRIER)
    return out[:n]


def _rank(rank: int, calls: list[tuple[str, str, str]], entries: int) -> RankCollectives:
    """A rank whose recorder holds the newest ``entries`` of ``calls``; the last one entered and waiting."""
    first = len(calls) - entries + 1
    ops = tuple((first + i, op, sizes, site) for i, (op, site, sizes) in enumerate(calls[-entries:]))
    last = ops[-1]
    pending = Pending(last[0], last[1], 4, 0.0, "train.py:58", last[2])
    return RankCollectives(rank, True, {"0": GroupView(last[0], last[0] - 1, pending, ops)})


def jobs(ranks: int, entries: int) -> dict[str, list[RankCollectives]]:
    total = entries + 400  # the ring buffer has turned: the windows start well after #1
    base = _calls(total)
    ahead = _calls(total + 1)
    extra = [*base[: total - 1900], EXTRA, *base[total - 1900 : -1]]
    skip = base[: total - 1900] + base[total - 1899 :] + base[-1:]
    return {
        "healthy": [_rank(r, ahead if r == 7 else base, entries) for r in range(ranks)],
        "one extra, 1,900 back": [_rank(r, extra if r == 7 else base, entries) for r in range(ranks)],
        "one skipped, 1,900 back": [_rank(r, skip if r == 7 else base, entries) for r in range(ranks)],
    }


def _time(ranks: list[RankCollectives], repeat: int) -> tuple[float, object]:
    times, stall = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        stall = analyze(ranks)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), stall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=256)
    ap.add_argument("--entries", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{args.ranks} ranks x {args.entries} recorded collectives, median of {args.repeat}")
    worst = 0.0
    for name, ranks in jobs(args.ranks, args.entries).items():
        with_pairing, stall = _time(ranks, args.repeat)
        with mock.patch.object(collectives, "align", lambda *a, **k: None):
            by_number, _ = _time(ranks, args.repeat)
        skew = getattr(stall, "skew", None)
        said = f"{skew.kind.value} at #{skew.seq} on ranks {list(skew.culprits)}" if skew is not None else "no skew"
        print(
            f"  {name:26s} by call site {with_pairing * 1000:7.1f} ms, by number only {by_number * 1000:6.1f} ms "
            f"(x{with_pairing / max(by_number, 1e-9):.1f}): {said}"
        )
        worst = max(worst, with_pairing)
    print(f"worst {worst * 1000:.0f} ms (target <= 1000 ms): {'ok' if worst <= 1.0 else 'OVER'}")


if __name__ == "__main__":
    main()
