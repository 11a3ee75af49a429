"""A DataLoader worker asleep for 10 hours on one sample (a retry back-off with no cap): training freezes.

report: https://github.com/pytorch/pytorch/issues/21554
saw: one DataLoader worker hung on a sample and the whole training froze; nothing was printed.
mechanism: the worker sleeps 10 h on sample 3, a timer far past any bound a job would wait; batches are delivered in order, so main waits in _try_get_data for that long.
expect: hung dataloader.worker_stuck
"""
import time

import torch
from _zoo import ready
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        if i == 3:
            ready()
            time.sleep(36000)  # HANG-HERE: a retry back-off grown to 10 h
        return torch.tensor([i])


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Shards(), num_workers=2)):
        print(f"step {step} batch {batch.tolist()}", flush=True)
