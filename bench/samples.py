"""Bench: the cost of recording which batch and sample indices each DataLoader worker holds (the autobeat
hook's ``_LoaderTasks``), on a DataLoader-bound job: two workers, tiny samples, the main process only takes
batches (about 10,000 a second here; `--work-us 50`: each sample costs 50 us in a worker, about 1,000
batches a second, closer to a real input pipeline). Bare python, `hangwatch run --no-autobeat`,
`hangwatch run` (the hook with its per-batch records) and `hangwatch run --on-hang heal` (the same, nothing to heal:
the main process's wait polled each second for an ask), alternated in one run.

Target (issue [4/5]): hook / no hook >= 0.97. The figures swing by about 10 % from run to run on two cores (the
main process, the only one busy all the time, shares them with its workers): the median of the pairs' own ratios
(each pair run back to back) is printed beside the ratio of the medians.

    python bench/samples.py [--pairs 4] [--seconds 6] [--work-us 0]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from _jobs import throughput

LOADER_BOUND = r"""
import sys, time
import torch
from torch.utils.data import DataLoader, Dataset
torch.set_num_threads(1)

class Tiny(Dataset):
    def __len__(self):
        return 10_000_000
    def __getitem__(self, i):
        end = time.perf_counter() + work
        while time.perf_counter() < end:  # the sample's own cost (decode, augment), in a worker
            pass
        return i

def keep(batch):
    return batch  # plain lists of ints: the pipe, not shared-memory tensors (one file descriptor a batch)

seconds, work = float(sys.argv[1]), float(sys.argv[2]) / 1e6
loader = DataLoader(Tiny(), batch_size=16, num_workers=2, collate_fn=keep)
n, t0 = 0, None
for batch in loader:
    n += 1
    if t0 is None and n == 200:
        t0, n = time.perf_counter(), 0  # past the workers' start
    if t0 is not None and time.perf_counter() - t0 >= seconds:
        break
print(f"THROUGHPUT {n / (time.perf_counter() - t0):.1f}", flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument(
        "--work-us", type=float, default=0.0, help="CPU time each sample costs in a worker (0: as fast as it goes)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "loader_bound.py"
        script.write_text(LOADER_BOUND)
        job = [sys.executable, str(script), str(args.seconds), str(args.work_us)]
        bare, off, on, heal = [], [], [], []
        for i in range(args.pairs):
            base = [sys.executable, "-m", "hangwatch", "run", "--min-stall", "30"]
            bare.append(throughput(job))
            off.append(throughput([*base, "--run-dir", f"{d}/off{i}", "--no-autobeat", "--", *job]))
            on.append(throughput([*base, "--run-dir", f"{d}/on{i}", "--", *job]))
            heal.append(throughput([*base, "--run-dir", f"{d}/heal{i}", "--on-hang", "heal", "--", *job]))
    b, f, w = statistics.median(bare), statistics.median(off), statistics.median(on)
    h = statistics.median(heal)
    print(f"bare python:   median {b:.1f} batches/s  {[f'{x:.1f}' for x in bare]}")
    print(f"--no-autobeat: median {f:.1f} batches/s  {[f'{x:.1f}' for x in off]}")
    print(f"autobeat:      median {w:.1f} batches/s  {[f'{x:.1f}' for x in on]}")
    print(f"--on-hang heal: median {h:.1f} batches/s  {[f'{x:.1f}' for x in heal]}")
    pairs = statistics.median(x / y for x, y in zip(on, off, strict=True))
    print(
        f"ratio hook/no hook: {w / f:.3f} (median of the pairs' ratios {pairs:.3f}); hook/bare: {w / b:.3f}; "
        f"heal on/no hook: {h / f:.3f} (target >= 0.97)"
    )
    print("PASS" if w / f >= 0.97 else "UNDER TARGET")


if __name__ == "__main__":
    main()
