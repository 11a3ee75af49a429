"""Two ranks under torchrun that join the group and then wait forever."""

import threading

import torch.distributed as dist
from _ready import ready

if __name__ == "__main__":
    dist.init_process_group("gloo")
    ready(f"rank{dist.get_rank()}")
    threading.Event().wait()
