"""Bench: the cost of autobeat (the injected optimizer-step and DataLoader hooks) at about 1,000
steps a second, under `hangwatch run` with and without `--no-autobeat`, alternated.

Target (issue [2/6]): with / without >= 0.99 (a cost of at most 1 %).

    python bench/autobeat.py [--pairs 4] [--seconds 6]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from _jobs import LOADER_TRAINER, throughput


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=6.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "trainer.py"
        script.write_text(LOADER_TRAINER)
        job = [sys.executable, str(script), str(args.seconds)]
        off, on = [], []
        for i in range(args.pairs):
            base = [sys.executable, "-m", "hangwatch", "run", "--min-stall", "30"]
            off.append(throughput([*base, "--run-dir", f"{d}/off{i}", "--no-autobeat", "--", *job]))
            on.append(throughput([*base, "--run-dir", f"{d}/on{i}", "--", *job]))
    b, w = statistics.median(off), statistics.median(on)
    print(f"--no-autobeat: median {b:.1f} steps/s  {[f'{x:.1f}' for x in off]}")
    print(f"autobeat:      median {w:.1f} steps/s  {[f'{x:.1f}' for x in on]}")
    print(f"ratio autobeat/none: {w / b:.3f} (target >= 0.99; cost {100 * (1 - w / b):.2f} %)")
    print("PASS" if w / b >= 0.99 else "UNDER TARGET")


if __name__ == "__main__":
    main()
