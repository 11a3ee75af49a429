"""How far do healthy real jobs stray from their median step? The figure behind --history-factor.

Runs real trainers under `hangwatch run` (report mode, so nothing is ever ended) and reads the
progress history it kept (summary.json `history`): the median interval between progress signals as
the run loop sees them (heartbeats and counters, polled every 0.25 s), the longest, and the bound an
alive job without progress would get. Prints, per job, longest/median and the bound's headroom over
the longest gap a healthy job really had (bound/longest: above 1 means the healthy job was never near
its bound). The jobs: Lightning over 4 epochs with 2 non-persistent workers (worker start-up at every
epoch boundary); the HF Trainer saving a checkpoint every 500 steps (64 epochs of its 256 items); a
plain loop with 4 workers, an evaluation pass and a torch.save every 50 steps; and half-second steps
with a silent 6 s metric pass every 10 steps.

    python bench/history.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCEN = Path(__file__).resolve().parent.parent / "tests" / "scenarios"

PLAIN = r"""
import sys, time, torch
from torch.utils.data import DataLoader, Dataset
class D(Dataset):
    def __len__(self): return 160
    def __getitem__(self, i):
        time.sleep(0.02); return torch.randn(32), torch.randn(1)
model = torch.nn.Linear(32, 1); opt = torch.optim.SGD(model.parameters(), lr=0.01)
step = 0
for epoch in range(3):
    for x, y in DataLoader(D(), batch_size=4, num_workers=4):
        loss = torch.nn.functional.mse_loss(model(x), y); opt.zero_grad(); loss.backward(); opt.step()
        step += 1
        print(f"epoch {epoch} step {step} loss {loss.item():.3f}", flush=True)
        if step % 50 == 0:
            torch.save(model.state_dict(), sys.argv[1])
    with torch.no_grad():
        for x, y in DataLoader(D(), batch_size=8, num_workers=4):
            model(x)
"""


# Half-second steps with a silent 6 s metric pass every 10 steps (no DataLoader, no print): the kind
# of long, normal gap a step history must allow.
SILENT_EVAL = r"""
import time, torch
model = torch.nn.Linear(64, 1); opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(30):
    x = torch.randn(16, 64); loss = model(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    print(f"step {step} loss {loss.item():.3f}", flush=True)
    time.sleep(0.5)
    if step % 10 == 9:
        t0, acc = time.monotonic(), 0.0
        while time.monotonic() - t0 < 6.0:
            acc += float(model(torch.randn(256, 64)).sum())
"""


def run(name: str, cmd: list[str], tmp: Path) -> dict:
    run_dir = tmp / name
    t0 = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "hangwatch",
            "run",
            "--run-dir",
            str(run_dir),
            "--min-stall",
            "5",
            "--on-hang",
            "report",
            "--",
            *cmd,
        ],
        capture_output=True,
        timeout=600,
        check=True,
    )
    s = json.loads((run_dir / "summary.json").read_text())
    h = s["history"] or {}
    return {"job": name, "seconds": round(time.monotonic() - t0, 1), "incidents": s["incidents"], **h}


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        plain = tmp / "plain.py"
        plain.write_text(PLAIN)
        rows.append(
            run(
                "lightning",
                [sys.executable, str(SCEN / "lightning_job.py"), "--epochs", "4", "--items", "96", "--workers", "2"],
                tmp,
            )
        )
        rows.append(
            run(
                "hf_trainer",
                [
                    sys.executable,
                    str(SCEN / "hf_trainer_job.py"),
                    "--steps",
                    "3000",
                    "--save-every",
                    "500",
                    "--out",
                    str(tmp / "hf"),
                ],
                tmp,
            )
        )
        rows.append(run("plain_loop", [sys.executable, str(plain), str(tmp / "ckpt.pt")], tmp))
        silent = tmp / "silent_eval.py"
        silent.write_text(SILENT_EVAL)
        rows.append(run("silent_eval", [sys.executable, str(silent)], tmp))
    print(
        f"{'job':<12} {'wall s':>7} {'inc':>4} {'n':>5} {'median s':>9} {'longest s':>10} {'longest/median':>15} "
        f"{'bound s':>8} {'bound/longest':>14}"
    )
    worst = 0.0
    for r in rows:
        med, longest, bound = r.get("median_s"), r.get("longest_s"), r.get("bound_s")
        ratio = longest / med if med and longest else None
        worst = max(worst, ratio or 0.0)
        head = bound / longest if bound and longest else None
        print(
            f"{r['job']:<12} {r['seconds']:>7} {r['incidents']:>4} {r.get('intervals', 0):>5} {med!s:>9} "
            f"{longest!s:>10} {ratio and round(ratio, 1)!s:>15} {bound!s:>8} {head and round(head, 1)!s:>14}"
        )
    print(f"worst longest/median over these healthy jobs: {worst:.1f}x; --history-factor default 100x")


if __name__ == "__main__":
    main()
