"""A dataset reads its chunks through a module-level ThreadPoolExecutor the parent already used, and its DataLoader
forks its worker: fork copies the executor (its count of idle threads) but not its threads, so in the worker the
future never runs. `python dl_fork_inherited_executor.py hang`; `python dl_fork_inherited_executor.py SECONDS`: each
process makes its own executor and each read takes SECONDS on the worker's own pool thread (a slow store): the
worker's main thread waits on a future that thread completes, and the job ends."""

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import torch
from torch.utils.data import DataLoader, Dataset

HANG = sys.argv[1] == "hang"
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0


def executor() -> ThreadPoolExecutor:
    global _pool, _pool_pid
    if _pool is None or (not HANG and _pool_pid != os.getpid()):
        _pool, _pool_pid = ThreadPoolExecutor(2, thread_name_prefix="chunk-io"), os.getpid()
    return _pool


def read_chunk(i: int, seconds: float) -> torch.Tensor:
    time.sleep(seconds)  # an object store's read
    return torch.full((4,), float(i))


class Chunks(Dataset):
    def __init__(self) -> None:
        self.meta = list(executor().map(read_chunk, range(4), [0.05] * 4))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> torch.Tensor:
        return executor().submit(read_chunk, i, 0.1 if HANG else float(sys.argv[1])).result()  # HANG-HERE


if __name__ == "__main__":
    loader = DataLoader(Chunks(), batch_size=2, num_workers=1, multiprocessing_context="fork")
    for batch in loader:
        print("batch", tuple(batch.shape), flush=True)
    print("done", flush=True)
