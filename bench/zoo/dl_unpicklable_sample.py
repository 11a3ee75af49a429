"""A sample that cannot be pickled is dropped by the worker's feeder thread: the batch never arrives.

report: https://github.com/pytorch/pytorch/issues/142884
saw: a multiprocess DataLoader hung forever when a sample failed to pickle (a PIL image whose file had vanished).
mechanism: the worker puts the batch on a multiprocessing queue whose feeder thread pickles it; the exception kills only that put, the worker stays alive and idle, so DataLoader's liveness check never fires and main waits forever.
expect: hung dataloader.batch_lost
"""
import torch
from _zoo import ready
from torch.utils.data import DataLoader, Dataset


class LazyImage:
    def __reduce__(self):
        ready()
        raise OSError("image file vanished")


class Images(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return LazyImage() if i == 2 else torch.tensor([i])


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Images(), batch_size=1, num_workers=1, collate_fn=lambda b: b)):  # HANG-HERE
        print(f"step {step}", flush=True)
