"""Bench: seconds from a hang to `detected_at`, for step intervals from 0.05 s to 2 s.

A job prints `step N` every INTERVAL seconds, records the moment of its last progress, then hangs.
Target (issue 3): latency <= max(min-stall, 3 x p99 step interval) + 3 s. The ratio printed is
latency / that bound (the baseline each case is held to), measured in the same run.

    python bench/detection.py [--min-stall 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _jobs import STEPPER


def one(interval: float, min_stall: float, tmp: Path) -> tuple[float, float]:
    steps = max(12, int(4 / interval))
    script, mark, run_dir = tmp / "stepper.py", tmp / f"hang-{interval}", tmp / f"run-{interval}"
    script.write_text(STEPPER)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "hangwatch",
            "run",
            "--run-dir",
            str(run_dir),
            "--min-stall",
            str(min_stall),
            "--on-hang",
            "kill",
            "--kill-grace",
            "1",
            "--capture-window",
            "1",
            "--",
            sys.executable,
            str(script),
            str(interval),
            str(steps),
            str(mark),
        ],
        capture_output=True,
        timeout=300,
        check=False,
    )
    incident = json.loads((run_dir / "incidents" / "001" / "incident.json").read_text())
    latency = incident["detected_at"] - float(mark.read_text())
    bound = max(min_stall, 3 * interval) + 3.0
    return latency, bound


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-stall", type=float, default=2.0)
    args = ap.parse_args()
    print(f"min-stall {args.min_stall:g} s")
    print(f"{'step interval':>14} {'latency':>9} {'bound':>7} {'ratio':>6}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as d:
        for interval in (0.05, 0.2, 0.5, 1.0, 2.0):
            latency, bound = one(interval, args.min_stall, Path(d))
            worst = max(worst, latency / bound)
            print(f"{interval:>13.2f}s {latency:>8.2f}s {bound:>6.1f}s {latency / bound:>6.2f}")
    print("PASS" if worst <= 1.0 else "OVER TARGET", f"(worst ratio {worst:.2f})")


if __name__ == "__main__":
    main()
