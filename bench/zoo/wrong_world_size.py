"""Each node passes its local rank as the global rank with world_size=4: ranks 2 and 3 never come.

report: https://github.com/pytorch/pytorch/issues/23074
also: https://github.com/pytorch/pytorch/issues/62381
saw: DDP initialisation hung on 2 nodes x 2 processes.
mechanism: world_size=4, but both nodes passed local_rank (0, 1) as the rank: the store waits for ranks 2 and 3, which never join.
expect: waiting distributed.rendezvous_wait
"""
import os

import torch.distributed as dist
import torch.multiprocessing as mp
from _zoo import free_port, ready


def main(local_rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    ready()
    dist.init_process_group("gloo", rank=local_rank, world_size=4)  # HANG-HERE


if __name__ == "__main__":
    mp.spawn(main, args=(free_port(),), nprocs=2)
