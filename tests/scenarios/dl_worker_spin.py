"""A Dataset whose __getitem__ spins forever on one pathological sample."""

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset


class TokenDataset(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 3:
            ready()
            n = 0
            while i == 3: n += 1  # HANG-HERE
        return torch.tensor([i])


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(TokenDataset(), batch_size=1, num_workers=2)):
        print(f"step {step}", flush=True)
