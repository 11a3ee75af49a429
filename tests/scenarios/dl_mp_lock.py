"""The main process holds a multiprocessing lock while it iterates the DataLoader; every worker
waits for that lock in __getitem__: a deadlock across processes."""

import multiprocessing as mp

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset

cache_lock = mp.Lock()


class CachedShards(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ready("worker")
        with cache_lock:  # HANG-HERE
            return torch.tensor([i])


if __name__ == "__main__":
    loader = DataLoader(CachedShards(), batch_size=1, num_workers=2)
    with cache_lock:  # HOLDER
        for step, batch in enumerate(loader):
            print(f"step {step}", flush=True)
