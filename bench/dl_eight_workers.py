"""Bench target: a DataLoader with 8 workers, one blocked forever in __getitem__."""

import os
import sys
import threading

import torch
from torch.utils.data import DataLoader, Dataset


class Blocking(Dataset):
    def __len__(self):
        return 1000

    def __getitem__(self, i):
        if i == 9:
            with open(sys.argv[1], "w") as f:
                f.write(str(os.getpid()))
            threading.Event().wait()
        return torch.tensor([i])


if __name__ == "__main__":
    for _ in DataLoader(Blocking(), batch_size=1, num_workers=8, prefetch_factor=1):
        pass
