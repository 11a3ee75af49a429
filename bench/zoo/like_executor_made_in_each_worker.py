"""Each process creates its own ThreadPoolExecutor lazily, and the chunk reads are slow (~15 s of batches).

report: https://github.com/m2lines/Samudra/pull/660
mechanism: the executor is created on first use in each process (keyed by pid), so forked workers start their own threads. Each chunk read takes ~0.47 s (a slow object store), so the two workers need ~15 s for the four batches; the main process waits silently for them, then trains and exits.
expect: healthy
"""
import concurrent.futures as cf
import os
import time

import torch
from _zoo import ready, seconds
from torch.utils.data import DataLoader, Dataset


class ZarrChunks(Dataset):
    def __init__(self):
        self._pool, self._pid = None, None
        self.stats = list(self.pool.map(self.read_chunk, range(4), [0.0] * 4))

    @property
    def pool(self):  # one executor per process: a forked worker starts its own threads
        if self._pid != os.getpid():
            self._pool, self._pid = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="chunk-reader"), os.getpid()
        return self._pool

    def read_chunk(self, c, delay):
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline:
            time.sleep(0.05)
        return torch.full((16,), float(c))

    def __getitem__(self, i):
        delay = seconds(15) / 32  # 64 samples / 2 workers, two parallel chunk reads each
        parts = [self.pool.submit(self.read_chunk, (i + k) % 4, delay) for k in range(2)]
        return torch.cat([p.result() for p in parts])

    def __len__(self):
        return 64


if __name__ == "__main__":
    ds = ZarrChunks()
    model = torch.nn.Linear(32, 1)
    print("dataset ready", flush=True)
    loader = DataLoader(ds, batch_size=16, num_workers=2)
    ready()
    outs = [model(x).mean().item() for x in loader]  # silent while the workers read
    print(f"epoch done: {len(outs)} batches, last out {outs[-1]:.3f}", flush=True)
