"""new_group with local synchronization, one rank late: the other waits in the group's store barrier, then both go on.

report: https://github.com/pytorch/pytorch/issues/173608
saw: the report's hang is ranks whose group names differ; here both create the same groups, one of them late.
mechanism: healthy: rank 0 waits in the store for rank 1, which loads its shard first (asleep in pieces); rank 1 then joins the group and the all_reduce completes.
expect: healthy
"""
import time

import torch
import torch.distributed as dist
from _zoo import ready, seconds, two_ranks


def main(rank):
    if rank == 1:  # loads its shard first (silent, asleep in pieces)
        deadline = time.monotonic() + seconds(12)
        while time.monotonic() < deadline:
            time.sleep(0.5)
    else:
        ready()
    g = dist.new_group([0, 1], backend="gloo", use_local_synchronization=True)  # rank 0 waits here
    dist.all_reduce(torch.ones(1), group=g)


if __name__ == "__main__":
    two_ranks(main)
