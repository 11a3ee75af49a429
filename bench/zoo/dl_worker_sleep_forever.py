"""A DataLoader worker stuck on one sample; training freezes with no error.

report: https://github.com/pytorch/pytorch/issues/21554
saw: one DataLoader worker hung on a sample and the whole training froze; nothing was printed.
mechanism: batches are delivered in order and with timeout=0 the main process only checks that workers are alive, so a live worker that never returns sample 3 parks the main process in _try_get_data forever.
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
            time.sleep(10**9)  # HANG-HERE
        return torch.tensor([i])


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Shards(), num_workers=2)):
        print(f"step {step} batch {batch.tolist()}", flush=True)
