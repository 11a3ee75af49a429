"""The first batch with many workers takes long: each worker builds its index first.

report: https://github.com/pytorch/pytorch/issues/19836
also: https://github.com/frank-xwang/RIDE-LongTailRecognition/issues/33
saw: "at the start of every epoch, the dataloader will stuck for around 30 seconds".
mechanism: healthy: worker_init_fn (opening files, building an index) burns CPU in every worker before its first batch.
expect: healthy
"""
import time

import torch
from _zoo import ready, seconds
from torch.utils.data import DataLoader, Dataset


class Indexed(Dataset):
    def __len__(self):
        return 50

    def __getitem__(self, i):
        return torch.tensor([i])


def build_index(_):
    end, n = time.time() + seconds(30), 0
    while time.time() < end:
        n += sum(range(10**4))


if __name__ == "__main__":
    print("starting epoch 0", flush=True)
    ready()
    for step, batch in enumerate(DataLoader(Indexed(), num_workers=2, worker_init_fn=build_index)):
        print(f"step {step}", flush=True)
