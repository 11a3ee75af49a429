"""torch.multiprocessing.spawn(nprocs=2) without a process group: rank 0 returns at once, rank 1 waits on an Event
nothing can set. The one process left is rank 1, though it is the only spawned process alive."""

import threading

import torch.multiprocessing as mp
from _ready import ready


def worker(rank: int) -> None:
    if rank == 1:
        ready("rank1")
        threading.Event().wait()  # HANG-HERE


if __name__ == "__main__":
    mp.spawn(worker, nprocs=2)
