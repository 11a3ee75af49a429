"""Persistent workers that serve epoch 1 and block from epoch 2 on.

report: https://github.com/wandb/senpai/pull/2906
also: https://github.com/vskode/acodet/issues/47
saw: all four runs deadlocked right after epoch 1 at 0 % CPU; relaunched with --no-persistent-workers they passed.
mechanism: with persistent_workers the same processes serve every epoch; state that changes across epochs (here: a per-epoch resource the worker waits for and nobody provides after epoch 1) blocks the worker only from epoch 2, at the epoch boundary. The reporters did not root-cause theirs; this reproduces the shape.
expect: hung dataloader.worker_stuck
"""
import threading

import torch
import torch.multiprocessing as mp
from _zoo import ready
from torch.utils.data import DataLoader, Dataset

epoch = mp.Value("i", 0)
shard_opened = threading.Event()  # set by a per-epoch opener thread that exists only in the parent


class Shards(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if epoch.value >= 1:
            ready()
            shard_opened.wait()  # HANG-HERE
        return torch.tensor([i])


if __name__ == "__main__":
    loader = DataLoader(Shards(), batch_size=2, num_workers=2, persistent_workers=True)
    for e in range(3):
        epoch.value = e
        print(f"epoch {e}", flush=True)
        for step, batch in enumerate(loader):
            print(f"epoch {e} step {step}", flush=True)
