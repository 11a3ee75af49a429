"""Bench: what torch's flight recorder and its reader cost a job, and how fast hangwatch reads every rank.

1. Throughput of a collective-heavy gloo job (2 ranks under torchrun, an all_reduce every step) with the recorder
   and each rank's worker server on, against both off (autobeat on in both), alternated in one run; the median of
   the pair ratios. Target: >= 0.99.
2. Start-up added per rank: init_process_group as the job sees it, with the server started after it, against
   without (median over the runs).
3. Time to read 8 local ranks' recorders at once (8 ranks under torchrun, stuck at a barrier rank 7 never
   reaches), as capture does it.

    python bench/flight.py [--pairs 5] [--seconds 8]
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from hangwatch.capture.flight import read_dumps, registry  # noqa: E402 - after the path above
from hangwatch.supervise.job.autobeat import FLIGHT_BUFFER, FLIGHT_VARS, autobeat_env  # noqa: E402

JOB = r"""
import os, sys, time
import torch, torch.distributed as dist
t0 = time.perf_counter()
dist.init_process_group("gloo")
init = time.perf_counter() - t0
rank = dist.get_rank()
x = torch.ones(1024)
seconds = float(sys.argv[1])
dist.barrier()
t0 = time.perf_counter(); n = 0
while time.perf_counter() - t0 < seconds:
    dist.all_reduce(x); n += 1
    x.mul_(0.5)
rate = n / (time.perf_counter() - t0)
if rank == 0:
    print(f"RATE {rate:.1f} INIT {init:.4f}", flush=True)
dist.destroy_process_group()
"""

STUCK = r"""
import os, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(4096)
for _ in range(50):
    dist.all_reduce(x)
open(os.path.join(sys.argv[1], f"ready-{rank}"), "w").close()
if rank == 7:
    time.sleep(3600)
dist.barrier()
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(hb: Path, on: bool) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in FLIGHT_VARS and k != "HANGWATCH_FLIGHT"}
    base.update({"OMP_NUM_THREADS": "1", "HANGWATCH_HEARTBEAT_DIR": str(hb)})
    base.update(autobeat_env(base, True, 1800.0, flight=on))
    return base


def one(script: Path, hb: Path, on: bool, seconds: float, nproc: int = 2) -> tuple[float, float]:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            str(nproc),
            "--master-port",
            str(_port()),
            str(script),
            str(seconds),
        ],
        env=_env(hb, on),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    m = re.search(r"RATE ([\d.]+) INIT ([\d.]+)", r.stdout)
    if m is None:
        raise SystemExit(f"no rate (exit {r.returncode}): {r.stdout[-400:]} {r.stderr[-1500:]}")
    return float(m.group(1)), float(m.group(2))


def read_eight(tmp: Path, rounds: int) -> tuple[float, float, int]:
    hb = tmp / "hb8"
    hb.mkdir()
    script = tmp / "stuck.py"
    script.write_text(STUCK)
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "8",
            "--master-port",
            str(_port()),
            str(script),
            str(hb),
        ],
        env=_env(hb, True),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while len(list(hb.glob("ready-*"))) < 8 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        ranks = {}
        for f in hb.glob("flight-*.json"):
            pid = int(f.stem.split("-")[1])
            entry = registry(pid, str(hb))
            if entry is not None:
                ranks[pid] = entry
        times = []
        answered = 0
        for _ in range(rounds):
            t0 = time.perf_counter()
            dumps = read_dumps(ranks)
            times.append(time.perf_counter() - t0)
            answered = sum(1 for d in dumps.values() if d.text is not None)
        return statistics.median(times), max(times), answered
    finally:
        os.killpg(p.pid, 9)
        p.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=8.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hw-flight-") as d:
        tmp = Path(d)
        script = tmp / "job.py"
        script.write_text(JOB)
        ratios, inits_on, inits_off, on_rates, off_rates = [], [], [], [], []
        for i in range(args.pairs):
            hb = tmp / f"hb{i}"
            hb.mkdir()
            order = (True, False) if i % 2 == 0 else (False, True)
            got = {}
            for on in order:
                got[on] = one(script, hb, on, args.seconds)
            on_rates.append(got[True][0])
            off_rates.append(got[False][0])
            inits_on.append(got[True][1])
            inits_off.append(got[False][1])
            ratios.append(got[True][0] / got[False][0])
            print(f"pair {i + 1}: on {got[True][0]:.0f}/s, off {got[False][0]:.0f}/s, ratio {ratios[-1]:.3f}")
        ratio = statistics.median(ratios)
        print(
            f"all_reduce steps/s, 2 ranks (recorder buffer {FLIGHT_BUFFER}, worker server per rank): on "
            f"{statistics.median(on_rates):.0f}, off {statistics.median(off_rates):.0f}; median ratio {ratio:.3f} "
            f"({'PASS' if ratio >= 0.99 else 'UNDER'} the 0.99 target)"
        )
        added = statistics.median(inits_on) - statistics.median(inits_off)
        print(
            f"init_process_group as the job sees it: {statistics.median(inits_on) * 1000:.1f} ms with the server, "
            f"{statistics.median(inits_off) * 1000:.1f} ms without: {added * 1000:+.1f} ms per rank"
        )
        med, worst, answered = read_eight(tmp, rounds=5)
        print(
            f"reading 8 local ranks' recorders at once: median {med * 1000:.0f} ms, max {worst * 1000:.0f} ms "
            f"({answered} of 8 answered)"
        )


if __name__ == "__main__":
    main()
