"""Two gloo ranks under torchrun make a group of both with use_local_synchronization=True (pytorch/pytorch#173608).

argv[1] "hang": rank 0 first makes a group of its own (its metrics writer's), which rank 1 skips, as that flag
allows. Torch names such a group by its members and the number of groups the rank has made, so rank 0's name for
[0, 1] is not rank 1's: each waits in the store for the other under its own name, for ever (until the group's
timeout, 30 min, raises). argv[1] SECONDS: both make the same groups, and rank 1 loads for SECONDS first (asleep in
pieces) while rank 0 waits in the group's making: it completes, and each rank says `rank R done`."""

import sys
import time

import torch
import torch.distributed as dist
from _ready import ready


def main() -> None:
    dist.init_process_group("gloo")
    rank, hang = dist.get_rank(), sys.argv[1] == "hang"
    if hang and rank == 0:
        dist.new_group([0], use_local_synchronization=True)  # a group of its own, for its metrics writer
    if not hang and rank == 1:
        end = time.monotonic() + float(sys.argv[1])  # loads its shard first
        while time.monotonic() < end:
            time.sleep(0.25)
    ready(f"rank{rank}")
    group = dist.new_group([0, 1], use_local_synchronization=True)  # HANG-HERE
    dist.all_reduce(torch.ones(1), group=group)
    print(f"rank {rank} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
