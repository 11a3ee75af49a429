"""Healthy twin of dl_worker_blocked.py: a DataLoader worker waits on an event with no timeout, but a thread of
its own (a background read) sets it argv[1] seconds later, and the job goes on."""

import sys
import threading
import time

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 25.0


class Shards(Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        if i == 20:
            done = threading.Event()
            threading.Timer(SECONDS, done.set).start()  # the read completes, late
            ready()
            done.wait()  # HANG-HERE
        time.sleep(0.02)
        return torch.tensor([i])


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Shards(), batch_size=1, num_workers=2)):
        print(f"step {step}", flush=True)
    print("done", flush=True)
