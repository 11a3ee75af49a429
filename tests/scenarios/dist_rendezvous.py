"""Rank 0 of a 2-rank job starts; rank 1 never does. Rank 0 waits at process-group setup."""

import threading

import torch.distributed as dist
from _ready import ready


def setup():
    threading.Timer(1.5, ready).start()
    dist.init_process_group("gloo", init_method="env://")  # HANG-HERE


if __name__ == "__main__":
    setup()
