"""An async filesystem's event loop thread is not copied by fork: the worker's sync() waits forever.

report: https://github.com/fsspec/gcsfs/issues/379
also: https://github.com/fsspec/s3fs/issues/914
saw: streaming a dataset through gcsfs, the DataLoader froze before the first batch with num_workers>0.
mechanism: fsspec's sync calls submit coroutines to an event loop running on an "fsspecIO" thread; a forked worker inherits the loop object but not its thread, so future.result() never returns. (A bare asyncio loop thread stands in for fsspec, which now refuses to fork in some versions.)
expect: hung fork.inherited_lock
accept: dataloader.worker_stuck
"""
import asyncio
import threading

import torch
from _zoo import ready
from torch.utils.data import DataLoader, Dataset

loop = asyncio.new_event_loop()
threading.Thread(target=loop.run_forever, daemon=True, name="fsspecIO").start()


async def _cat(path):
    return len(path)


def cat(path):
    return asyncio.run_coroutine_threadsafe(_cat(path), loop).result()  # HANG-HERE


class Remote(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        ready()
        return torch.tensor([cat(f"gs://bucket/shard-{i}")])


if __name__ == "__main__":
    cat("gs://bucket/index")  # the parent uses the filesystem first
    for step, batch in enumerate(DataLoader(Remote(), num_workers=1)):
        print(f"step {step}", flush=True)
