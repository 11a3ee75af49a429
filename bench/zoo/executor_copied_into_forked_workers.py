"""A dataset's ThreadPoolExecutor, started in the parent, is copied into forked DataLoader workers without its threads.

report: https://github.com/m2lines/Samudra/pull/660
also: https://github.com/rohanpm/more-executors/issues/140 ("threads aren't copied over a fork ... futures which hang")
saw: the fix creates the executor lazily "so that each forked DataLoader worker gets its own clean executor".
mechanism: fork copies the executor object (its work queue, its record of two started threads, its idle-thread semaphore) but not its threads. In a worker, submit() sees enough threads (or an idle one) and starts none, so the work item sits in a queue nobody reads and future.result() waits forever; the main process waits for the batch.
expect: hung fork.inherited_lock
accept: dataloader.worker_stuck
"""
import concurrent.futures as cf

import torch
from _zoo import ready
from torch.utils.data import DataLoader, Dataset


class ZarrChunks(Dataset):
    """Each sample is assembled from chunks read in parallel on a thread pool."""

    def __init__(self):
        self.pool = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="chunk-reader")
        self.stats = list(self.pool.map(self.read_chunk, range(4)))  # normalisation stats, read at start-up

    def read_chunk(self, c):
        return torch.full((16,), float(c))

    def __getitem__(self, i):
        parts = [self.pool.submit(self.read_chunk, (i + k) % 4) for k in range(2)]
        return torch.cat([p.result() for p in parts])  # HANG-HERE

    def __len__(self):
        return 64


if __name__ == "__main__":
    ds = ZarrChunks()
    model = torch.nn.Linear(32, 1)
    for step, x in enumerate(DataLoader(ds, batch_size=16)):  # sanity pass in the main process: fine
        print(f"sanity step {step} out {model(x).mean().item():.3f}", flush=True)
    loader = DataLoader(ds, batch_size=16, num_workers=2)  # fork (Linux default)
    ready()
    for step, x in enumerate(loader):
        print(f"train step {step} out {model(x).mean().item():.3f}", flush=True)
