"""A DataLoader worker raises on one sample; the main process raises it again ("Caught ValueError in DataLoader
worker process 0") and exits 1. The line to name is the dataset's, from the worker's own traceback."""

import torch
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 6:
            raise ValueError(f"sample {i}: shard-0042.bin is truncated")  # RAISES-HERE
        return torch.tensor([i])


for step, _ in enumerate(DataLoader(Shards(), batch_size=1, num_workers=1)):
    print(f"step {step}", flush=True)
