"""A DataLoader over a dataset holding a lambda (fine with fork, impossible to send to spawned workers)."""

import torch
from torch.utils.data import DataLoader, Dataset


class Items(Dataset):
    def __init__(self) -> None:
        self.transform = lambda x: x * 2  # not picklable

    def __len__(self) -> int:
        return 16

    def __getitem__(self, i: int):
        return self.transform(torch.tensor([float(i)]))


if __name__ == "__main__":
    total = sum(float(b.sum()) for b in DataLoader(Items(), batch_size=4, num_workers=2))
    print(f"sum {total}", flush=True)
