"""Bench: with the defaults (no flag but --on-hang kill), how soon is each proven hang declared, and does any
healthy job get touched?

Hung jobs (the proof list, README "What counts as proof"): a wait nothing will release, a lock cycle, a counting
spin, a prompt, ranks in different collectives, lost work, a forked child in an inherited lock, a lock whose
holder died, a stopped process. Latency: from the moment the job got stuck (it writes its ready file right
before) to the incident's `detected_at`. Goal: at most 20 s for every case (the default --min-stall, 120 s, is
the baseline it is held against: the ratio printed).

Healthy jobs: real Lightning and HF Trainer runs, a replay of trainers' log formats with a silent 25 s pause, and
the healthy twins of the tests (a late event, a silent evaluation, a download before a barrier, a lock its holder
releases, pool workers recycled, a long batch). False alarms: any incident that is not `slow`/`waiting`, any
action on the job. Goal: 0.

    python bench/early.py [--only NAME] [--parallel 3]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SC = ROOT / "tests" / "scenarios"
MIN_STALL_DEFAULT = 120.0


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def torchrun(n: int, script: str, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        str(n),
        "--master-port",
        str(_port()),
        str(SC / script),
        *args,
    ]


def plain(script: str, *args: str) -> list[str]:
    return [sys.executable, str(SC / script), *args]


@dataclass
class Case:
    name: str
    argv: list[str]
    hung: bool
    cause: str | None = None
    stdin_open: bool = False  # a pipe that stays open and silent (a prompt nobody answers)
    holder: list[str] = field(default_factory=list)  # a process outside the job that holds a lock first


def cases(tmp: Path) -> list[Case]:
    lock = str(tmp / "cache.lock")
    return [
        Case("worker waits on an event nothing sets", plain("dl_worker_blocked.py"), True, "dataloader.worker_stuck"),
        Case("lock cycle between threads", plain("deadlock.py"), True, "code.deadlock"),
        Case("lock cycle across processes", plain("dl_mp_lock.py"), True, "code.deadlock"),
        Case("counting spin in collate", plain("dl_collate_count.py"), True, "dataloader.worker_stuck"),
        Case("counting spin in main", plain("busy_loop.py"), True, "code.busy_loop"),
        Case("prompt nobody answers", plain("prompt_job.py"), True, "process.waits_for_input", stdin_open=True),
        Case("ranks in different collectives", torchrun(3, "dist_diverged.py"), True, "distributed.peer_stuck"),
        Case("pool worker killed mid-task", plain("pool_lost.py"), True, "child.lost_work"),
        Case("forked worker in an inherited lock", plain("fork_lock.py"), True, "fork.inherited_lock"),
        Case("lock whose holder died", plain("mp_lock_orphaned.py"), True, "code.deadlock"),
        Case("stopped process", plain("self_stop.py"), True, "process.stopped"),
        Case("Lightning, 2 workers", plain("lightning_job.py", "--epochs", "3"), False),
        Case("HF Trainer", plain("hf_trainer_job.py", "--steps", "120", "--out", str(tmp / "hf")), False),
        Case("log formats, a silent 25 s pause", plain("log_replay.py", "25"), False),
        Case("worker event set 25 s late", plain("dl_event_late.py", "25"), False),
        Case("silent 40 s evaluation", plain("silent_eval.py", "40"), False),
        Case("rank 0 downloads 30 s, barrier", torchrun(2, "dist_download.py", "30", "mid"), False),
        Case(
            "lock released after 25 s of work",
            plain("filelock_wait.py", lock, "filelock"),
            False,
            holder=plain("lock_holder.py", lock, "filelock", "work:25"),
        ),
        Case("pool workers recycled", plain("pool_recycled.py"), False),
        Case("one 30 s batch", plain("dl_long_batch.py", "30"), False),
    ]


@dataclass
class Result:
    case: Case
    code: int | None
    cause: str | None
    latency: float | None
    touched: bool
    seconds: float
    note: str = ""


def run_case(c: Case, tmp: Path, timeout: float) -> Result:
    work = tmp / c.name.replace(" ", "_").replace(",", "")
    work.mkdir(parents=True, exist_ok=True)
    ready, run_dir = work / "ready", work / "run"
    env = {**os.environ, "PYTHONPATH": str(SC), "HW_READY": str(ready), "HW_TMP": str(work), "OMP_NUM_THREADS": "1"}
    holder = None
    if c.holder:
        held = work / "held"
        holder = subprocess.Popen(
            c.holder,
            env={**env, "HW_READY": str(held)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while not held.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    r_fd = w_fd = None
    if c.stdin_open:
        r_fd, w_fd = os.pipe()
    t0 = time.monotonic()
    p = subprocess.Popen(
        [sys.executable, "-m", "hangwatch", "run", "--run-dir", str(run_dir), "--on-hang", "kill", "--", *c.argv],
        env=env,
        cwd=work,
        stdin=r_fd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    if r_fd is not None:
        os.close(r_fd)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.terminate()  # hangwatch ends its job's tree on SIGTERM
        p.wait(timeout=60)
    finally:
        if w_fd is not None:
            os.close(w_fd)
        if holder is not None:
            holder.kill()
            holder.wait(timeout=10)
    seconds = time.monotonic() - t0
    incidents = [json.loads(f.read_text()) for f in sorted((run_dir / "incidents").glob("*/incident.json"))]
    hung = [i for i in incidents if i["verdict"] in ("hung", "stopped")]
    touched = bool(hung) or any(i["action"] != "none" for i in incidents)
    cause = hung[0]["findings"][0]["cause"] if hung else (incidents[0]["findings"][0]["cause"] if incidents else None)
    latency = None
    if hung:  # from the moment it got stuck: its ready file, else (a job stuck from its start) its launch
        launch = next(
            (json.loads(ln)["at"] for ln in (run_dir / "events.jsonl").read_text().splitlines() if '"launch"' in ln),
            None,
        )
        since = ready.stat().st_mtime if ready.exists() else launch
        latency = hung[0]["detected_at"] - since if since is not None else None
    return Result(c, p.returncode, cause, latency, touched, seconds)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("--parallel", type=int, default=3, help="cases at once (2 cores: 3 is about right)")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per case")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hw-early-") as d:
        tmp = Path(d)
        todo = [c for c in cases(tmp) if args.only in c.name]
        with ThreadPoolExecutor(args.parallel) as pool:
            results = list(pool.map(lambda c: run_case(c, tmp, args.timeout), todo))
    print(f"{'case':<38} {'expected':<26} {'found':<26} {'exit':>4} {'latency':>8} {'ratio':>6}  ok")
    latencies, false_alarms, missed = [], [], []
    for r in results:
        c = r.case
        want = c.cause if c.hung else "untouched"
        got = r.cause if r.touched else "untouched" + (f" ({r.cause})" if r.cause else "")
        ok = (
            (r.touched and r.cause == c.cause and r.latency is not None and r.latency <= 20.0)
            if c.hung
            else not r.touched
        )
        if c.hung and r.latency is not None:
            latencies.append(r.latency)
        if c.hung and not ok:
            missed.append(c.name)
        if not c.hung and r.touched:
            false_alarms.append(c.name)
        lat = f"{r.latency:.1f}s" if r.latency is not None else "-"
        ratio = f"{r.latency / MIN_STALL_DEFAULT:.2f}" if r.latency is not None else "-"
        print(
            f"{c.name:<38} {want:<26} {got[:26]:<26} {r.code if r.code is not None else '-':>4} {lat:>8} "
            f"{ratio:>6}  {'yes' if ok else 'NO'}"
        )
    if latencies:
        xs = sorted(latencies)
        print(
            f"hung cases: {len([r for r in results if r.case.hung]) - len(missed)} of "
            f"{len([r for r in results if r.case.hung])} named within 20 s; latency p50 {xs[len(xs) // 2]:.1f} s, "
            f"max {xs[-1]:.1f} s (the default --min-stall: {MIN_STALL_DEFAULT:.0f} s)"
        )
    healthy = len([r for r in results if not r.case.hung])
    print(
        f"false alarms with the defaults: {len(false_alarms)} of {healthy} healthy jobs"
        + (f" ({', '.join(false_alarms)})" if false_alarms else "")
    )
    if missed:
        print("missed or late:", ", ".join(missed))


if __name__ == "__main__":
    main()
