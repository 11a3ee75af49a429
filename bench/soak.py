"""Soak: a healthy torch job under `hangwatch run` for a long time, and what hangwatch itself grows.

The job: a small model trained with a DataLoader of 2 workers (autobeat beats every optimizer step), a
tqdm bar under a pipe, about 1,000 log lines a second, and a checkpoint (torch.save) every few minutes.
hangwatch runs it with --metrics-port. Every 10 s this samples hangwatch's RSS, CPU time, open fds and
threads, and the run directory's size (output.log and its rotations apart); at the end it prints the
slopes after the warm-up (a least-squares line through the samples), against the targets:

    RSS growth <= 1 MB per hour; CPU <= 1 % of a core; fds and threads flat; run directory <= 50 MB a day.

    python bench/soak.py --minutes 120 [--warmup 10] [--json FILE]
    python bench/soak.py --minutes 1.5 --warmup 0.5 --checkpoint-every 15 --check   # the CI form: exit 1 on a leak

The run directory lives under a temporary directory and is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil
from _jobs import free_port

SAMPLE_EVERY_S = 10.0

JOB = r"""
import os, sys, time
import torch
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

minutes, ckpt_every_s, ckpt = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
torch.set_num_threads(1)


class Rows(Dataset):
    def __len__(self):
        return 10**9

    def __getitem__(self, i):
        return torch.randn(32), torch.randint(0, 4, ())


model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Rows(), batch_size=64, num_workers=2, persistent_workers=True)
end, last_ckpt, lines = time.time() + minutes * 60, time.time(), 0
bar = tqdm(total=int(minutes * 60 * 50), file=sys.stderr, mininterval=1.0)
for step, (x, y) in enumerate(loader):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    for _ in range(20):  # about 1,000 lines a second at ~50 steps a second
        print(f"step {step} loss {loss.item():.4f} lr 0.01 tokens/s 123456", flush=False)
    sys.stdout.flush()
    bar.update(1)
    if time.time() - last_ckpt >= ckpt_every_s:
        torch.save(model.state_dict(), ckpt)
        last_ckpt = time.time()
    time.sleep(max(0.0, 0.02 - 0.001))
    if time.time() >= end:
        break
bar.close()
print("done", flush=True)
"""


@dataclass
class Sample:
    """One look at hangwatch, ``t`` seconds into the run."""

    t: float
    rss_mb: float
    cpu_s: float
    fds: int
    threads: int
    run_dir_mb: float  # output.log and its rotations apart


def _dir_mb(run_dir: Path) -> float:
    total = 0
    for p in run_dir.rglob("*"):
        if p.is_file() and not p.name.startswith("output.log"):
            try:
                total += p.stat().st_size
            except OSError:
                continue
    return total / 1e6


def _slope(xs: list[float], ys: list[float]) -> float:
    """Least squares: units of y per unit of x."""
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def soak(minutes: float, warmup_min: float, ckpt_every_s: float) -> tuple[list[Sample], dict[str, float]]:
    """Run the job under hangwatch for ``minutes``; the samples and the slopes after ``warmup_min``."""
    tmp = Path(tempfile.mkdtemp(prefix="hangwatch-soak-"))
    run_dir = tmp / "run"
    (tmp / "job.py").write_text(JOB)
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "hangwatch",
        "run",
        "--run-dir",
        str(run_dir),
        "--metrics-port",
        str(port),
        "--log-max-size",
        "64M",
        "--log-keep",
        "2",
        "--",
        sys.executable,
        str(tmp / "job.py"),
        str(minutes),
        str(ckpt_every_s),
        str(tmp / "ckpt.pt"),
    ]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    hw = psutil.Process(p.pid)
    samples: list[Sample] = []
    t0 = time.monotonic()
    time.sleep(SAMPLE_EVERY_S)  # the first sample once hangwatch and the job are up
    try:
        while p.poll() is None and time.monotonic() - t0 < minutes * 60 + 120:
            try:
                with hw.oneshot():
                    cpu = hw.cpu_times()
                    samples.append(
                        Sample(
                            round(time.monotonic() - t0, 1),
                            hw.memory_info().rss / 1e6,
                            cpu.user + cpu.system,
                            hw.num_fds(),
                            hw.num_threads(),
                            _dir_mb(run_dir),
                        )
                    )
            except psutil.Error:
                break
            time.sleep(SAMPLE_EVERY_S)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    late = [s for s in samples if s.t >= warmup_min * 60] or samples
    hours = [s.t / 3600 for s in late]
    slopes = {
        "rss_mb_per_hour": _slope(hours, [s.rss_mb for s in late]),
        "cpu_percent_of_a_core": 100 * _slope([s.t for s in late], [s.cpu_s for s in late]),
        "fds_per_hour": _slope(hours, [float(s.fds) for s in late]),
        "threads_per_hour": _slope(hours, [float(s.threads) for s in late]),
        "run_dir_mb_per_day": 24 * _slope(hours, [s.run_dir_mb for s in late]),
        "fds_max_minus_min": float(max(s.fds for s in late) - min(s.fds for s in late)) if late else 0.0,
        "threads_max_minus_min": float(max(s.threads for s in late) - min(s.threads for s in late)) if late else 0.0,
        "exit_code": float(p.returncode if p.returncode is not None else -1),
    }
    return samples, slopes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=120.0)
    ap.add_argument("--warmup", type=float, default=10.0, help="minutes left out of the slopes")
    ap.add_argument("--checkpoint-every", type=float, default=180.0, help="seconds between the job's checkpoints")
    ap.add_argument("--json", help="write the samples and slopes here")
    ap.add_argument("--check", action="store_true", help="exit 1 on an fd or thread leak (the CI form)")
    a = ap.parse_args()
    samples, s = soak(a.minutes, a.warmup, a.checkpoint_every)
    first, last = samples[0], samples[-1]
    print(f"soak: {a.minutes:g} min, {len(samples)} samples, slopes after {a.warmup:g} min of warm-up")
    print(
        f"  RSS       {first.rss_mb:.1f} -> {last.rss_mb:.1f} MB; slope {s['rss_mb_per_hour']:+.2f} MB/h "
        f"(target <= 1 MB/h)"
    )
    print(f"  CPU       {s['cpu_percent_of_a_core']:.2f} % of a core (target <= 1 %)")
    print(
        f"  fds       {first.fds} -> {last.fds}; slope {s['fds_per_hour']:+.1f}/h, spread {s['fds_max_minus_min']:.0f}"
    )
    print(
        f"  threads   {first.threads} -> {last.threads}; slope {s['threads_per_hour']:+.1f}/h, spread "
        f"{s['threads_max_minus_min']:.0f}"
    )
    print(
        f"  run dir   {first.run_dir_mb:.2f} -> {last.run_dir_mb:.2f} MB (output.log apart); "
        f"{s['run_dir_mb_per_day']:.1f} MB/day (target <= 50)"
    )
    print(f"  job exit  {s['exit_code']:.0f}")
    if a.json:
        Path(a.json).write_text(json.dumps({"samples": [asdict(x) for x in samples], "slopes": s}, indent=1))
    if a.check:
        # A leak grows with time; a flat process varies by a thread or an fd around a capture or a scrape.
        leak = s["fds_max_minus_min"] > 8 or s["threads_max_minus_min"] > 6 or s["exit_code"] != 0
        print("LEAK" if leak else "no fd or thread leak")
        return 1 if leak else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
