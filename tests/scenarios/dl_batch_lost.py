"""A sample that cannot be pickled: the worker's queue feeder thread drops it, main waits forever."""

import os
import threading

from _ready import ready
from torch.utils.data import DataLoader, Dataset


class Unpicklable:
    def __reduce__(self):
        raise RuntimeError("cannot pickle this sample (file handle vanished)")


class ImageDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return Unpicklable()


def keep_list(batch):
    return batch


if __name__ == "__main__":
    # Say ready once the main process has been waiting a moment for the lost batch.
    threading.Timer(2.0, ready).start()
    loader = DataLoader(ImageDataset(), batch_size=None, num_workers=1, collate_fn=keep_list)
    for batch in loader:  # HANG-HERE
        print("got", batch, flush=True)
    os._exit(0)
