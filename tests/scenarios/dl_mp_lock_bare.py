"""A validation DataLoader whose workers wait for a multiprocessing lock that the main process took with
a bare acquire() in a helper earlier (not a `with` block on its current stack) and never released,
while main waits for their batch."""

import multiprocessing as mp

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset

cache_lock = mp.Lock()


class ValShards(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        ready("worker")
        with cache_lock:  # HANG-HERE
            return torch.tensor([i])


def warm_cache():
    # Taken, and its release forgotten:
    cache_lock.acquire()  # HOLDER
    return {"warm": True}


def validate():
    # HW_TQDM=1: under a tqdm bar, whose monitor thread in main wakes every 10 s (a library's, never the lock's)
    import os

    loader = DataLoader(ValShards(), batch_size=1, num_workers=2)
    if os.environ.get("HW_TQDM"):
        from tqdm import tqdm

        loader = tqdm(loader)
    for step, batch in enumerate(loader):
        print(f"val {step}", flush=True)


if __name__ == "__main__":
    warm_cache()
    validate()
