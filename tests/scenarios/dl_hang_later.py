"""Trains (two workers, a sample every 0.05 s each, a step printed per sample), then one sample's read blocks
forever: a job that is already running when hangwatch attaches to it. argv[1]: the sample that never returns
(-1: none, the job ends after $HW_SAMPLES samples)."""

import os
import sys
import threading
import time

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset

HANG_AT = int(sys.argv[1]) if len(sys.argv) > 1 else -1


def read_sample(idx):
    if idx == HANG_AT:
        threading.Event().wait()  # HANG-HERE
    time.sleep(0.05)
    return torch.tensor([idx])


class Samples(Dataset):
    def __len__(self):
        return int(os.environ.get("HW_SAMPLES", "400"))

    def __getitem__(self, idx):
        return read_sample(idx)


if __name__ == "__main__":
    ready()
    for step, _batch in enumerate(DataLoader(Samples(), batch_size=1, num_workers=2)):
        print(f"step {step}", flush=True)
    print("done", flush=True)
