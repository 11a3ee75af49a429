"""A collate_fn that spins forever with a counter that advances (`while n >= 0: n += 1`): the
counter moves, nothing else does; a spin, not work."""

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset


class Tokens(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.tensor([i])


def pad_collate(batch):
    if int(batch[0][0]) == 16:
        ready()
        n = 0
        while n >= 0:  # HANG-HERE
            n += 1
    return torch.stack(batch)


if __name__ == "__main__":
    for step, b in enumerate(DataLoader(Tokens(), batch_size=2, num_workers=2, collate_fn=pad_collate)):
        print(f"step {step}", flush=True)
