"""Healthy: a DataLoader worker sleeps 50 ms in __getitem__ for every item, so every stack sample
finds it on the same line; the main process keeps receiving batches."""

import time

from _ready import ready
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __len__(self):
        return 10_000_000

    def __getitem__(self, i):
        time.sleep(0.05)  # SLEEP-HERE
        return i


if __name__ == "__main__":
    for n, batch in enumerate(DataLoader(SlowDataset(), batch_size=2, num_workers=1)):
        if n == 2:
            ready()
