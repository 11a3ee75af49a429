"""An IterableDataset streaming records; one worker's stream stalls waiting for a producer."""

import queue

import torch
from _ready import ready
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class Stream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        for i in range(1000):
            if info.id == 1 and i == 2:
                ready()
                records = queue.Queue()
                yield records.get()  # HANG-HERE
            yield torch.tensor([i])


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Stream(), batch_size=4, num_workers=2)):
        print(f"step {step}", flush=True)
