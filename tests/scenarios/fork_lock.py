"""A metrics thread holds a lock while DataLoader forks its workers; workers then wait on it forever."""

import threading
import time

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset

_stats_lock = threading.Lock()


def metrics_uploader():
    while True:
        with _stats_lock:
            time.sleep(0.5)
        time.sleep(0.001)


class LoggedDataset(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        ready()
        with _stats_lock:  # HANG-HERE
            pass
        return torch.tensor([i])


if __name__ == "__main__":
    threading.Thread(target=metrics_uploader, name="metrics-uploader", daemon=True).start()
    time.sleep(0.2)
    for step, batch in enumerate(DataLoader(LoggedDataset(), batch_size=1, num_workers=2)):
        print(f"step {step}", flush=True)
