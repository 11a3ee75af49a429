"""A job that ignores SIGTERM (as a trainer whose signal handler waits for a checkpoint that never
comes) while its DataLoader workers hang: only SIGKILL ends it."""

import signal
import threading

from _ready import ready
from torch.utils.data import DataLoader, Dataset


class Stuck(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # torch's worker loop resets it: deaf again
        ready(f"worker{i}")
        threading.Event().wait()  # HANG-HERE


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # workers inherit it across fork
    for batch in DataLoader(Stuck(), batch_size=1, num_workers=2):
        pass
