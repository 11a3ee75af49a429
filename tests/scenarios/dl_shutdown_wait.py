"""Healthy: the loop stops early (one batch) while a worker is in a sample that takes 20 s; the DataLoader's
shutdown joins that worker for 5 s (torch's MP_STATUS_CHECK_INTERVAL), then terminates it, and the job exits 0.
Five silent seconds in torch's own bounded wait."""

import time

from _ready import ready
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i >= 2:
            time.sleep(20)  # a slow sample the loop no longer wants
        return i


if __name__ == "__main__":
    batches = iter(DataLoader(Slow(), batch_size=1, num_workers=2))
    for step in range(2):
        next(batches)
        print(f"step {step}", flush=True)
    ready()
    del batches  # the iterator ends its workers here, one of them in a 20 s sample  # SHUTDOWN-HERE
    print("done", flush=True)
