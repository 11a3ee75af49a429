"""A lock held by a background thread at fork time: the forked worker waits for it forever.

report: https://github.com/DataDog/dd-trace-py/pull/18900
also: https://github.com/python/cpython/issues/50970
saw: a logging handler lock held by another thread at fork time: logging in the child blocks forever.
mechanism: fork copies a lock in its locked state but not the thread that would release it. CPython re-initialises its own handler locks at fork; locks of libraries and custom handlers are not.
expect: hung fork.inherited_lock
accept: dataloader.worker_stuck
"""
import threading
import time

import torch
from _zoo import ready
from torch.utils.data import DataLoader, Dataset

metrics_lock = threading.Lock()  # a metrics/logging helper's own lock


def flusher():
    while True:
        with metrics_lock:
            time.sleep(0.5)  # flushing metrics while holding the lock


class Samples(Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, i):
        ready()
        with metrics_lock:  # HANG-HERE
            return torch.tensor([i])


if __name__ == "__main__":
    threading.Thread(target=flusher, daemon=True, name="metrics-flusher").start()
    time.sleep(0.2)
    for step, batch in enumerate(DataLoader(Samples(), num_workers=2)):
        print(f"step {step}", flush=True)
