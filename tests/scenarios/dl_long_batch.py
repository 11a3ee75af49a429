"""A DataLoader whose worker computes for a long time on one batch: it walks its data (the loop's
values change), so it is alive. argv[1]: seconds it takes (-1: it never ends); argv[2]: workers
(0: the loop runs in the main process, between steps). Fast batches before and after."""

import itertools
import sys
import time

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else -1.0
WORKERS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
SLOW_INDEX = 240  # after ~5 s of fast batches: ~20 polled intervals, well over the 8 a median needs


class Shards(Dataset):
    def __len__(self):
        return 260

    def __getitem__(self, i):
        if i != SLOW_INDEX:
            time.sleep(0.04)
            return torch.tensor([i])
        ready()
        rows, total, t0 = list(range(997)), 0, time.monotonic()
        for row in itertools.cycle(rows):  # HANG-HERE
            total += row * row
            if 0 <= SECONDS < time.monotonic() - t0:
                break
        return torch.tensor([total % 7])


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Shards(), batch_size=1, num_workers=WORKERS)):
        print(f"step {step}", flush=True)
    print("done", flush=True)
