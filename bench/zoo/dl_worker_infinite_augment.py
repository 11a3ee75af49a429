"""An augmentation that loops forever on one image inside a DataLoader worker.

report: https://github.com/pytorch/pytorch/issues/33296
also: https://github.com/pytorch/pytorch/issues/1355
saw: training froze at random; only with num_workers=0 could the reporter see that albumentations' RandomFog looped forever on one sample.
mechanism: one pathological sample makes one worker spin at 100 % CPU forever; batches are delivered in order, so the main process waits for it.
expect: hung dataloader.worker_stuck
accept: code.busy_loop
"""
import torch
from _zoo import ready
from torch.utils.data import DataLoader, Dataset


def random_fog(x, seed):
    density = seed % 7
    while density != 3:  # HANG-HERE
        density = (density * 2) % 6  # HANG-HERE (never reaches 3 for an odd start)
    return x


class Images(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 5:
            ready()
        return random_fog(torch.full((4,), float(i)), 1 if i == 5 else 3)


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Images(), batch_size=1, num_workers=2)):
        print(f"step {step}", flush=True)
