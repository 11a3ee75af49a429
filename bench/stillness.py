"""Bench: the kernel's view of a whole job, read every second by the run loop (supervise/job/stillness.py).

Target (issue [4/5]): a job of 64 processes x 20 threads read in at most 5 ms a round (a round a second), the threads
included: they are read only when the processes' own counters say still, and then every STILL_S, so a quiet
round costs the processes' counters plus a third of the threads'. Baseline, measured in the same run: the same
counters read the library way (psutil: cpu_times, io_counters, status, and every thread's).

    python bench/stillness.py [--procs 64] [--threads 20] [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

import psutil

from hangwatch.supervise.job.stillness import STILL_S, read_job, read_wakes

CHILD = (
    "import threading, time\n"
    "for _ in range({n}): threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
    "print('up', flush=True)\ntime.sleep(3600)\n"
)


def _median_ms(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _psutil_round(procs: list[psutil.Process]) -> None:
    for p in procs:
        p.cpu_times()
        p.io_counters()
        p.threads()
        p.status()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=64)
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    kids = [
        subprocess.Popen([sys.executable, "-c", CHILD.format(n=args.threads - 1)], stdout=subprocess.PIPE, text=True)
        for _ in range(args.procs)
    ]
    try:
        for k in kids:
            assert k.stdout is not None and k.stdout.readline().strip() == "up"
        pids = [k.pid for k in kids]
        threads = sum(len(os.listdir(f"/proc/{p}/task")) for p in pids)
        quiet = _median_ms(lambda: read_job(pids), args.runs)
        threads_ms = _median_ms(lambda: read_wakes(pids), args.runs)
        whole = quiet + threads_ms / STILL_S
        procs = [psutil.Process(p) for p in pids]
        lib = _median_ms(lambda: _psutil_round(procs), args.runs)
        print(f"{len(pids)} processes, {threads} threads, median of {args.runs}")
        print(f"  processes' counters (every round)       {quiet:7.2f} ms")
        print(f"  every thread's wake-ups (every {STILL_S:.0f} s)    {threads_ms:7.2f} ms")
        print(f"  a quiet round, on average               {whole:7.2f} ms")
        print(f"  psutil, every counter every round       {lib:7.2f} ms (x{lib / whole:.1f} of a quiet round)")
        ok = whole <= 5.0
        print(f"a quiet round {whole:.2f} ms (target <= 5 ms): {'ok' if ok else 'over'}")
        return 0 if ok else 1
    finally:
        for k in kids:
            os.kill(k.pid, signal.SIGKILL)
        for k in kids:
            k.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
