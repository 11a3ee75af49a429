"""Bench: seconds from a rank's hang to an incident naming the culprit rank.

4 ranks on one node (torchrun --nproc-per-node 4), and 2x2 across two local "nodes" (two
hangwatches, each wrapping torchrun --nnodes 2 --node-rank i). The last rank stops at a known
moment. Target (issue 4): the single-node detection bound, max(min-stall, 3 x p99 interval) + 3 s,
plus 2 s. The ratio is latency / target.

    python bench/distributed.py [--min-stall 2]
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from _jobs import DIST_STEPPER

INTERVAL, HANG_STEP = 0.1, 30


def _ports() -> int:
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket() as s2:
                s2.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue
    raise SystemExit("no two adjacent free ports")


def _hw(run_dir: Path, min_stall: float, torchrun: list[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hangwatch",
        "run",
        "--run-dir",
        str(run_dir),
        "--min-stall",
        str(min_stall),
        "--startup-grace",
        "120",
        "--capture-window",
        "1",
        "--kill-grace",
        "2",
        "--on-hang",
        "kill",
        "--",
        sys.executable,
        "-m",
        "torch.distributed.run",
        *torchrun,
    ]


def _result(run_dir: Path, mark: Path) -> tuple[float, int | None]:
    incident = json.loads((run_dir / "incidents" / "001" / "incident.json").read_text())
    rc = incident["findings"][0]
    return incident["detected_at"] - float(mark.read_text()), (rc.get("where") or {}).get("rank")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-stall", type=float, default=2.0)
    args = ap.parse_args()
    target = max(args.min_stall, 3 * INTERVAL) + 3.0 + 2.0
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        script = tmp / "dist_stepper.py"
        script.write_text(DIST_STEPPER)
        job = [str(script), str(INTERVAL), str(HANG_STEP), str(tmp / "mark1")]
        subprocess.run(
            _hw(tmp / "one", args.min_stall, ["--nproc-per-node", "4", "--master-port", str(_ports()), *job]),
            capture_output=True,
            timeout=600,
            check=False,
        )
        rows.append(("4 ranks, 1 node", *_result(tmp / "one", tmp / "mark1")))
        port = _ports()
        job2 = [str(script), str(INTERVAL), str(HANG_STEP), str(tmp / "mark2")]
        procs = [
            subprocess.Popen(
                _hw(
                    tmp / f"node{i}",
                    args.min_stall,
                    [
                        "--nnodes",
                        "2",
                        "--node-rank",
                        str(i),
                        "--nproc-per-node",
                        "2",
                        "--master-addr",
                        "127.0.0.1",
                        "--master-port",
                        str(port),
                        *job2,
                    ],
                ),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for i in (0, 1)
        ]
        for p in procs:
            p.wait(timeout=600)
        for i in (0, 1):
            rows.append((f"2x2, incident on node {i}", *_result(tmp / f"node{i}", tmp / "mark2")))
    print(f"min-stall {args.min_stall:g} s, steps every {INTERVAL} s, the last rank hangs at step {HANG_STEP}")
    print(f"{'case':<28} {'latency':>8} {'culprit':>8} {'target':>7} {'ratio':>6}")
    ok = True
    for name, latency, rank in rows:
        ok &= latency <= target and rank == 3
        print(f"{name:<28} {latency:>7.2f}s {'rank ' + str(rank):>8} {target:>6.1f}s {latency / target:>6.2f}")
    print("PASS" if ok else "OVER TARGET or WRONG CULPRIT")


if __name__ == "__main__":
    main()
