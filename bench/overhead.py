"""Bench: throughput of a CPU training loop with and without `hangwatch run`, alternated.

Target (issue [3/5]): with / without >= 0.99, the median of the pairs' ratios (each pair runs back to back, so
drift on the machine hits both sides alike); `hangwatch run -- true` adds <= 0.15 s. Each run trains for SECONDS
and reports its own steps per second.

    python bench/overhead.py [--pairs 3] [--seconds 8]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _jobs import TRAINER, throughput

import hangwatch

# The `hangwatch` console script, as pip writes it: what a user's start costs (no runpy, unlike -m).
SCRIPT = "import sys; from hangwatch.cli import main; sys.exit(main())"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--starts", type=int, default=20, help="runs of `hangwatch run -- true` (and of `true`)")
    ap.add_argument(
        "--baseline-src",
        help="another checkout's src/ (e.g. a `git worktree` of the commit before "
        "a change): its start is measured alternately with this one's, in the same run",
    )
    ap.add_argument("--start-only", action="store_true", help="skip the throughput pairs")
    args = ap.parse_args()
    ok = True
    if not args.start_only:
        with tempfile.TemporaryDirectory() as d:
            script = Path(d) / "trainer.py"
            script.write_text(TRAINER)
            job = [sys.executable, str(script), str(args.seconds)]
            bare, watched = [], []
            for i in range(args.pairs):
                bare.append(throughput(job))
                watched.append(
                    throughput(
                        [
                            sys.executable,
                            "-m",
                            "hangwatch",
                            "run",
                            "--run-dir",
                            f"{d}/run{i}",
                            "--min-stall",
                            "30",
                            "--",
                            *job,
                        ]
                    )
                )
        b, w = statistics.median(bare), statistics.median(watched)
        ratios = sorted(x / y for x, y in zip(watched, bare, strict=True))  # each pair ran back to back
        r = statistics.median(ratios)
        print(f"without hangwatch: median {b:.1f} steps/s  {[f'{x:.1f}' for x in bare]}")
        print(f"with hangwatch:    median {w:.1f} steps/s  {[f'{x:.1f}' for x in watched]}")
        print(
            f"ratio with/without: median of the pairs {r:.3f} ({ratios[0]:.3f} to {ratios[-1]:.3f}; of the medians "
            f"{w / b:.3f}); target >= 0.99"
        )
        ok = r >= 0.99
    added = _start_and_exit(args.starts, args.baseline_src)
    print("PASS" if ok and added <= 0.15 else "UNDER TARGET")


def _start_and_exit(runs: int, baseline_src: str | None) -> float:
    """`hangwatch run -- true` against `true` alone, alternated: the start and exit hangwatch adds
    (start, launch, notice the exit, write the summary), as medians of one run of this script.

    Bytecode is compiled first, as `pip install` does (PYTHONDONTWRITEBYTECODE would otherwise
    make every run compile every module)."""
    sides: dict[str, dict[str, str]] = {"this tree": {}}
    compileall.compile_dir(str(Path(hangwatch.__file__).parent), quiet=1)
    if baseline_src:
        compileall.compile_dir(str(Path(baseline_src) / "hangwatch"), quiet=1)
        sides["baseline"] = {"PYTHONPATH": str(Path(baseline_src).resolve())}
    times: dict[str, list[float]] = {"true": [], **{k: [] for k in sides}}
    with tempfile.TemporaryDirectory() as d:
        for i in range(runs):
            t = time.perf_counter()
            subprocess.run(["true"], capture_output=True, timeout=60, check=True)
            times["true"].append(time.perf_counter() - t)
            for name, extra in sides.items():
                t = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-c", SCRIPT, "run", "--run-dir", f"{d}/{name[0]}{i}", "--", "true"],
                    capture_output=True,
                    timeout=60,
                    check=True,
                    env={**os.environ, **extra},
                )
                times[name].append(time.perf_counter() - t)
    bare = statistics.median(times["true"])
    for name, runs_ in times.items():
        med = statistics.median(runs_)
        extra = "" if name == "true" else f"  added {med - bare:.3f} s"
        print(
            f"{'`true`' if name == 'true' else f'`hangwatch run -- true` ({name})':44} median {med:.3f} s  "
            f"min {min(runs_):.3f} s{extra}"
        )
    added = statistics.median(times["this tree"]) - bare
    if "baseline" in times:
        print(f"added start+exit, this tree / baseline: {added / (statistics.median(times['baseline']) - bare):.2f}")
    print(f"added start+exit: {added:.3f} s (target <= 0.15 s)")
    return added


if __name__ == "__main__":
    main()
