"""One bad sample: index 42 of a map-style dataset (a shard on a mount that stopped answering) never comes back,
so the worker that holds its batch waits forever. `--iterable`: the same in an IterableDataset (no indices; the
worker's position is a local). `--good`: no bad sample. `--spawn`, `--persistent`, `--workers N` set the DataLoader's own options."""

import argparse
import os
import threading

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

BAD = 42


def read_shard(path, idx):
    if idx == BAD:
        ready()
        threading.Event().wait()  # HANG-HERE
    return torch.tensor([idx])


class Shards(Dataset):
    def __init__(self, root):
        self.root = root

    def __len__(self):
        return 256

    def __getitem__(self, idx):
        return read_shard(os.path.join(self.root, f"shard-{idx:04d}.bin"), idx)


class Stream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        for position in range(info.id, 256, info.num_workers):
            path = f"/mnt/stream/part-{position:04d}"  # noqa: F841 - the local a capture reads
            if position == BAD:
                ready()
                threading.Event().wait()  # HANG-HERE:stream
            yield torch.tensor([position])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterable", action="store_true")
    ap.add_argument("--spawn", action="store_true")
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--good", action="store_true", help="no bad sample: the healthy twin")
    args = ap.parse_args()
    if args.good:
        BAD = -1
    data = Stream() if args.iterable else Shards("/mnt/shards")
    loader = DataLoader(
        data,
        batch_size=None if args.iterable else 8,
        num_workers=args.workers,
        multiprocessing_context="spawn" if args.spawn else None,
        persistent_workers=args.persistent,
    )
    for epoch in range(2):
        for step, batch in enumerate(loader):
            print(f"epoch {epoch} step {step}", flush=True)
