"""A map-style Dataset whose __getitem__ blocks forever on one index (a stuck shard read)."""

import threading

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset


def read_shard(idx):
    if idx == 5:
        ready()
        threading.Event().wait()  # HANG-HERE
    return torch.tensor([idx])


class ShardDataset(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, idx):
        return read_shard(idx)


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(ShardDataset(), batch_size=1, num_workers=2)):
        print(f"step {step}", flush=True)
