"""Bench: a job writing MIB MiB to stdout, through `hangwatch run` vs piped to `cat`.

hangwatch also writes every byte to output.log. Target (issue 3): throughput ratio >= 0.5.

    python bench/passthrough.py [--mib 1024]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _jobs import FLOOD


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, timeout=1800, check=True)
    return time.perf_counter() - t


def timed_cat(job: list[str]) -> float:
    """``job | cat > /dev/null``, without a shell."""
    t = time.perf_counter()
    producer = subprocess.Popen(job, stdout=subprocess.PIPE)
    consumer = subprocess.Popen(["cat"], stdin=producer.stdout, stdout=subprocess.DEVNULL)
    assert producer.stdout is not None
    producer.stdout.close()
    consumer.wait(timeout=1800)
    producer.wait(timeout=60)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    cats, hws, logged = [], [], 0
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "flood.py"
        script.write_text(FLOOD)
        job = [sys.executable, str(script), str(args.mib)]
        for i in range(args.pairs):  # alternated, so drift on the machine hits both sides alike
            cats.append(timed_cat(job))
            run_dir = Path(d) / f"run{i}"
            hws.append(timed([sys.executable, "-m", "hangwatch", "run", "--run-dir", str(run_dir), "--", *job]))
            logged = (run_dir / "output.log").stat().st_size
            shutil.rmtree(run_dir)
    mb, cat, hw = args.mib, statistics.median(cats), statistics.median(hws)
    print(f"piped to cat:        median {cat:6.2f} s  {mb / cat:7.0f} MiB/s  {[f'{x:.2f}' for x in cats]}")
    print(f"through hangwatch:   median {hw:6.2f} s  {mb / hw:7.0f} MiB/s  {[f'{x:.2f}' for x in hws]}  "
          f"(output.log {logged / 2**20:.0f} MiB, byte count {'ok' if logged == mb * 2**20 else 'WRONG'})")
    print(f"ratio hangwatch/cat: {cat / hw:.2f} (target >= 0.5)")
    print("PASS" if cat / hw >= 0.5 else "UNDER TARGET")


if __name__ == "__main__":
    main()
