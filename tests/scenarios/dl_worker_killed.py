"""A DataLoader worker is killed (as by the OOM killer); the main process raises and exits 1."""

import os
import signal

import torch
from torch.utils.data import DataLoader, Dataset


class Big(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 6:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.tensor([i])


for step, _ in enumerate(DataLoader(Big(), batch_size=1, num_workers=2)):
    print(f"step {step}", flush=True)
