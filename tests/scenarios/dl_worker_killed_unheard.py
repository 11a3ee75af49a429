"""A DataLoader worker killed by SIGKILL (as by the OOM killer) that torch has not heard of yet: the main thread
blocks SIGCHLD (dl_worker_killed.py's HW_LATE_SIGCHLD), and its wait for the dead worker's batch times out, when
torch checks its workers and raises, only after 20 s (DataLoader(timeout=20); 5 s by default). Until then the
worker is a zombie its parent has not reaped, and the main process waits for its batch: a crash on its way."""

import os
import signal

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset, get_worker_info


class Heavy(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        if get_worker_info() is not None and i >= 8:  # the second batch, worker 1's
            ready()
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.tensor([float(i)])


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # (torch's SIGCHLD handler would raise at once)
    for batch in DataLoader(Heavy(), batch_size=8, num_workers=2, timeout=20):  # HANG-HERE
        print(batch, flush=True)
