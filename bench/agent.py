"""Bench: `hangwatch agent` at rest, with 0 and with N healthy jobs on the node.

Each job: torch imported, a step printed every second to its own log file (as under nohup), for the whole bench.
The agent (and, with jobs, the `hangwatch attach` child it starts for each) is measured over a window once every job
is attached: CPU as a percentage of one core (the agent and its children together, and the agent alone), and RSS
(the agent, and the agent with its children), sampled every ``--sample-every`` seconds. The RSS slope is a
least-squares line through the samples after ``--warmup`` seconds (flat at rest: a warm-up is not a leak, a slope is).

Target (issue [5/5]): with 8 jobs, <= 1 % of a core; RSS flat over 30 minutes.

    python bench/agent.py [--jobs 0,8] [--seconds 60]
    python bench/agent.py --jobs 8 --seconds 1800 --sample-every 60 --warmup 300 [--json FILE]   # the 30-minute soak
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from soak import _slope  # bench/ is on the path when a bench script runs

JOB = r"""
import sys, time
import torch  # what the agent looks for
while True:
    print(f"step {int(time.time())}", flush=True)
    time.sleep(1.0)
"""
ATTACH_TIMEOUT_S = 60.0


def _tree_cpu_rss(p: psutil.Process) -> tuple[float, float, float, float]:
    """(CPU seconds of p and its children, of p alone, RSS MB of p and its children, of p alone)."""
    procs = [p, *p.children(recursive=True)]
    cpu = rss = 0.0
    own_cpu = own_rss = 0.0
    for q in procs:
        try:
            t, m = q.cpu_times(), q.memory_info().rss / 1e6
        except psutil.Error:
            continue
        cpu += t.user + t.system
        rss += m
        if q.pid == p.pid:
            own_cpu, own_rss = t.user + t.system, m
    return cpu, own_cpu, rss, own_rss


def _window(hw: psutil.Process, n_jobs: int, seconds: float, sample_every: float, warmup: float) -> dict[str, object]:
    """The agent's figures over ``seconds``: CPU over the whole window, RSS sampled every ``sample_every`` s."""
    t0 = time.monotonic()
    series: list[tuple[float, float, float]] = []  # (seconds into the window, RSS MB with children, agent alone)
    cpu0, own0, rss0, own_rss0 = _tree_cpu_rss(hw)
    series.append((0.0, rss0, own_rss0))
    each: list[dict[int, float]] = [_each_rss(hw)]  # per sample: pid -> RSS MB (which process grew)
    while (left := seconds - (time.monotonic() - t0)) > 0:
        time.sleep(min(sample_every, left))
        _, _, rss, own_rss = _tree_cpu_rss(hw)
        series.append((time.monotonic() - t0, rss, own_rss))
        each.append(_each_rss(hw))
    cpu1, own1, _, _ = _tree_cpu_rss(hw)
    wall = time.monotonic() - t0
    late = [x for x in series if x[0] >= warmup] or series
    hours = [x[0] / 3600 for x in late]
    return {
        "jobs": n_jobs,
        "cpu_percent_total": 100 * (cpu1 - cpu0) / wall,
        "cpu_percent_agent": 100 * (own1 - own0) / wall,
        "rss_mb_total_start": series[0][1],
        "rss_mb_total_end": series[-1][1],
        "rss_mb_agent_start": series[0][2],
        "rss_mb_agent": series[-1][2],
        "rss_mb_per_hour_total": _slope(hours, [x[1] for x in late]),
        "rss_mb_per_hour_agent": _slope(hours, [x[2] for x in late]),
        "series": series,
        "each": each,
    }


def _each_rss(p: psutil.Process) -> dict[int, float]:
    out = {}
    for q in [p, *p.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            out[q.pid] = q.memory_info().rss / 1e6
    return out


def measure(n_jobs: int, seconds: float, sample_every: float = 60.0, warmup: float = 0.0) -> dict[str, object]:
    """The agent with ``n_jobs`` jobs: its figures over ``seconds`` once every job is attached."""
    tmp = Path(tempfile.mkdtemp(prefix="hangwatch-agent-bench-"))
    script = tmp / "job.py"
    script.write_text(JOB)
    runs = tmp / "runs"
    jobs: list[subprocess.Popen[bytes]] = []
    agent = subprocess.Popen(
        [sys.executable, "-m", "hangwatch", "agent", "--runs-dir", str(runs), "--match", re.escape(str(tmp))],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for i in range(n_jobs):
            with open(tmp / f"job{i}.log", "wb") as out:
                jobs.append(
                    subprocess.Popen([sys.executable, str(script)], stdout=out, stderr=out, start_new_session=True)
                )
        deadline = time.monotonic() + ATTACH_TIMEOUT_S
        hw = psutil.Process(agent.pid)
        while len([c for c in hw.children() if "attach" in " ".join(c.cmdline())]) < n_jobs:
            if time.monotonic() > deadline:
                raise SystemExit(f"the agent attached to fewer than {n_jobs} jobs in {ATTACH_TIMEOUT_S:.0f} s")
            time.sleep(0.5)
        time.sleep(min(20.0, seconds / 3))  # past each attach's start
        r = _window(hw, n_jobs, seconds, sample_every, warmup)
        r["incidents"] = len(list(runs.glob("*/*/incidents/*/incident.json")))  # healthy jobs: none
        r["looks"] = sum(  # and no look either: each job prints a step a second
            line.count('"event": "probe"') + line.count('"event": "extended"')
            for f in runs.glob("*/*/events.jsonl")
            for line in f.read_text().splitlines()
        )
        return r
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(agent.pid, signal.SIGKILL)
            agent.wait(timeout=10)
        for j in jobs:
            try:
                os.killpg(j.pid, signal.SIGKILL)  # each job leads its own session
            except ProcessLookupError:
                pass
            j.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="0,8", help="comma-separated numbers of jobs")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--sample-every", type=float, default=60.0, help="seconds between RSS samples")
    ap.add_argument("--warmup", type=float, default=0.0, help="seconds of the window left out of the RSS slope")
    ap.add_argument("--json", help="write every figure and the RSS series here")
    a = ap.parse_args()
    results = []
    for n in (int(x) for x in a.jobs.split(",")):
        r = measure(n, a.seconds, a.sample_every, a.warmup)
        results.append(r)
        for t, rss, own in r["series"]:  # type: ignore[attr-defined]
            print(
                f"  {t / 60:6.1f} min  RSS {rss:7.1f} MB with its attach children, the agent {own:5.1f} MB", flush=True
            )
        print(
            f"{n} job(s): CPU {r['cpu_percent_total']:.2f} % of a core "
            f"(the agent alone {r['cpu_percent_agent']:.2f} %); "
            f"RSS {r['rss_mb_total_start']:.0f} -> {r['rss_mb_total_end']:.0f} MB with its attach children, "
            f"the agent {r['rss_mb_agent_start']:.1f} -> {r['rss_mb_agent']:.1f} MB; slope after {a.warmup:g} s "
            f"{r['rss_mb_per_hour_total']:+.2f} MB/h (the agent {r['rss_mb_per_hour_agent']:+.2f}); "
            f"{r['incidents']} incident(s), {r['looks']} look(s) "
            f"(target with 8 jobs: <= 1 %, RSS flat)",
            flush=True,
        )
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
