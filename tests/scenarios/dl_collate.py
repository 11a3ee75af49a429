"""A custom collate_fn that blocks on a condition nobody signals (written with a lambda-free style)."""

import threading

import torch
from _ready import ready
from torch.utils.data import DataLoader, TensorDataset

_calls = {"n": 0}


def pad_collate(batch):
    _calls["n"] += 1
    if _calls["n"] == 3:
        ready()
        cond = threading.Condition()
        with cond:
            cond.wait()  # HANG-HERE
    return torch.stack([b[0] for b in batch])


if __name__ == "__main__":
    ds = TensorDataset(torch.arange(256).float().unsqueeze(1))
    for step, batch in enumerate(DataLoader(ds, batch_size=8, num_workers=1, collate_fn=pad_collate)):
        print(f"step {step}", flush=True)
