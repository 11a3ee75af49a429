"""Bench: throughput of a CPU training loop with and without `hangwatch run`, alternated.

Target (issue 3): with / without >= 0.99. Each run trains for SECONDS and reports its own
steps per second; runs alternate so drift on the machine hits both sides alike.

    python bench/overhead.py [--pairs 3] [--seconds 8]
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _jobs import TRAINER, throughput

import hangwatch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "trainer.py"
        script.write_text(TRAINER)
        job = [sys.executable, str(script), str(args.seconds)]
        bare, watched = [], []
        for i in range(args.pairs):
            bare.append(throughput(job))
            watched.append(throughput([sys.executable, "-m", "hangwatch", "run", "--run-dir", f"{d}/run{i}",
                                       "--min-stall", "30", "--", *job]))
    b, w = statistics.median(bare), statistics.median(watched)
    print(f"without hangwatch: median {b:.1f} steps/s  {[f'{x:.1f}' for x in bare]}")
    print(f"with hangwatch:    median {w:.1f} steps/s  {[f'{x:.1f}' for x in watched]}")
    print(f"ratio with/without: {w / b:.3f} (target >= 0.99)")
    start = _start_and_exit(args.pairs * 2)
    print(f"`hangwatch run -- true`: median {start:.3f} s wall (target <= 0.2 s)")
    print("PASS" if w / b >= 0.99 and start <= 0.2 else "UNDER TARGET")


def _start_and_exit(runs: int) -> float:
    """Wall time of `hangwatch run -- true`: start, launch, notice the exit, write the summary.

    Bytecode is compiled first, as `pip install` does (PYTHONDONTWRITEBYTECODE would otherwise
    make every run compile every module)."""
    compileall.compile_dir(str(Path(hangwatch.__file__).parent), quiet=1)
    times = []
    with tempfile.TemporaryDirectory() as d:
        for i in range(runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "hangwatch", "run", "--run-dir", f"{d}/t{i}", "--", "true"],
                           capture_output=True, timeout=60, check=True)
            times.append(time.perf_counter() - t)
    return statistics.median(times)


if __name__ == "__main__":
    main()
