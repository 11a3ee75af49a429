"""new_group with local synchronization, a group made on rank 0 only: the next group's names differ, and both ranks wait in its making.

report: https://github.com/pytorch/pytorch/issues/173608
saw: ranks hang in new_group(..., use_local_synchronization=True) when some ranks created other groups before it.
mechanism: torch names a hashed group by its members and the number of groups the rank has made: rank 0 made a group
  of its own that rank 1 skipped, so its name for [0, 1] is not rank 1's, and each waits in the store for the other
  under its own name (until the group's timeout, 30 min, raises).
diagnosis: hung, distributed.peer_stuck: ranks 0 and 1 make a group of [0, 1] under names that differ at
  gloo_new_group_names_differ.py:21.
expect: hung distributed.peer_stuck
"""
import torch
import torch.distributed as dist
from _zoo import ready, two_ranks


def main(rank):
    if rank == 0:  # a group of its own for the metrics writer: with local synchronization, non-members may skip it
        dist.new_group([0], use_local_synchronization=True)
    ready()
    g = dist.new_group([0, 1], backend="gloo", use_local_synchronization=True)  # HANG-HERE
    dist.all_reduce(torch.ones(1), group=g)
    print(rank, "done", flush=True)


if __name__ == "__main__":
    two_ranks(main)
