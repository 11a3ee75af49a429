"""Bench: what the startup hook adds to the start of each Python process of a job (every rank, every spawned
DataLoader worker, every Python subprocess imports it): ``python -c pass`` with the hook's directory on
PYTHONPATH and a heartbeat directory (the hook installed: its slot, its finder, its birth record), against the same
command without the hook, alternated. ``--baseline-src DIR``: a third arm, another checkout's hook (its
``src/``), for a before/after in one run.

Figures on this 2-core machine (medians of 30, bytecode cached): the hook at 860956e added 13.5 ms (typing, json
and functools imported at start); now 1.7 ms.

    python bench/hook_start.py [--starts 30] [--baseline-src ../other/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HOOK = Path(__file__).resolve().parent.parent / "src" / "hangwatch" / "_autobeat"


def start(hook_dir: Path | None, heartbeat: str) -> float:
    """Seconds for one ``python -c pass``, with the hook in ``hook_dir`` (None: without it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HANGWATCH_HEARTBEAT_DIR")}
    if hook_dir is not None:
        env.update(PYTHONPATH=str(hook_dir), HANGWATCH_HEARTBEAT_DIR=heartbeat)
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", "pass"], env=env)
    bound = threading.Timer(60.0, p.kill)  # the wait's bound: a blocking wait, not subprocess's polling one (its
    bound.start()  # sleeps, growing to 50 ms, would round every start to them)
    try:
        if p.wait() != 0:
            raise SystemExit(f"python -c pass exited {p.returncode}")
    finally:
        bound.cancel()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=30)
    ap.add_argument("--baseline-src", type=Path, help="another checkout's src/: its hook as a third arm")
    args = ap.parse_args()
    arms: dict[str, Path | None] = {"without the hook": None, "with this hook": HOOK}
    if args.baseline_src is not None:
        arms["with the baseline's hook"] = args.baseline_src.resolve() / "hangwatch" / "_autobeat"
    times: dict[str, list[float]] = {name: [] for name in arms}
    with tempfile.TemporaryDirectory() as heartbeat:
        for _ in range(args.starts):
            for name, hook_dir in arms.items():
                times[name].append(start(hook_dir, heartbeat))
    bare = statistics.median(times["without the hook"])
    for name, got in times.items():
        med = statistics.median(got)
        added = f", added {1000 * (med - bare):.1f} ms (ratio {med / bare:.2f})" if name != "without the hook" else ""
        print(f"python -c pass {name}: median {1000 * med:.1f} ms{added}")


if __name__ == "__main__":
    main()
