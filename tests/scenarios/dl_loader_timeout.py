"""A DataLoader worker stuck for 27 hours in __getitem__ (a sleep past every bound). `python dl_loader_timeout.py
SECONDS`: the loader has DataLoader(timeout=SECONDS), raises "DataLoader timed out", and the job catches it, leaves
the loop and ends. `python dl_loader_timeout.py hang`: no loader timeout; main waits for the batch for ever."""

import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> torch.Tensor:
        if i == 0:
            time.sleep(100_000)  # HANG-HERE
        return torch.tensor([i])


if __name__ == "__main__":
    timeout = 0 if sys.argv[1] == "hang" else int(sys.argv[1])
    try:
        for batch in DataLoader(Shards(), num_workers=1, timeout=timeout):
            print("batch", batch.tolist(), flush=True)
    except RuntimeError as e:
        print("skipped:", str(e)[:60], flush=True)
    print("done", flush=True)
