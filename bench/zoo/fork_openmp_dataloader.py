"""OpenMP started in the parent (an image op), then the same op in forked DataLoader workers: no first batch.

report: https://github.com/pytorch/pytorch/issues/45198
saw: no first batch with num_workers>0, only for large images, and depending on import order; opencv after fork used GNU OpenMP.
mechanism: as in #89693, the parent's parallel region started libgomp's pool; a forked worker's first parallel region (raised to 2 threads by worker_init_fn, as opencv does by itself) waits for pool threads that were never copied. Here a large torch op stands in for cv2.warpAffine.
expect: hung fork.inherited_lock
accept: dataloader.worker_stuck
"""
import torch
from _zoo import ready
from torch.utils.data import DataLoader, Dataset


def warp(i):
    return torch.randn(64**3, dtype=torch.float64).float().sum() + i  # HANG-HERE


class Images(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        ready()
        return warp(i)


def init(_):
    torch.set_num_threads(2)


if __name__ == "__main__":
    warp(0)  # the parent warms its OpenMP pool
    for step, batch in enumerate(DataLoader(Images(), num_workers=2, worker_init_fn=init)):
        print(f"step {step}", flush=True)
