"""A debug barrier before the forward, while another rank is still fetching its batch from a queue nobody fills.

report: https://github.com/dylanyunlon/Neuron_SP/issues/73
saw: rank 0 printed "before forward (step=0)" and stopped; the other ranks never printed [data].
mechanism: rank 0 reached a dist.barrier() while rank 1 was blocked in next(data_iter) on a prefetch queue its producer never fills.
expect: hung distributed.peer_stuck
"""
import queue

import torch.distributed as dist
from _zoo import ready, two_ranks


def batches(rank):
    prefetched: queue.Queue = queue.Queue()
    if rank == 0:
        prefetched.put("batch 0")
    else:
        ready()  # rank 1's producer thread was never started
    while True:
        yield prefetched.get()  # HANG-HERE


def main(rank):
    it = batches(rank)
    x = next(it)
    print(f"[data] rank {rank} got {x}", flush=True)
    print(f"rank {rank} before forward (step=0)", flush=True)
    dist.barrier()


if __name__ == "__main__":
    two_ranks(main)
