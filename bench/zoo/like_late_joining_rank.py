"""A rank that starts late: the others wait at process-group setup, then all train.

report: https://github.com/flyteorg/flytekit/pull/3419
also: https://github.com/meta-pytorch/torchx/issues/1071
saw: the zero worker started later than the others, and the rendezvous windows were tight.
mechanism: healthy: rank 0 waits at init_process_group until rank 1 (its pod scheduled late) joins.
expect: healthy
"""
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from _zoo import free_port, ready, seconds


def main(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if rank == 0:
        ready()
    else:
        time.sleep(seconds(25))  # the second pod is scheduled late
    dist.init_process_group("gloo", rank=rank, world_size=2)
    for step in range(3):
        t = torch.ones(2)
        dist.all_reduce(t)
        print(f"rank {rank} step {step}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(main, args=(free_port(),), nprocs=2)
