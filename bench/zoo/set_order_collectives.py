"""Collectives issued in the order of a set, which differs between processes: the ranks never match.

report: https://github.com/NVIDIA/nvalchemi-toolkit/pull/143
also: https://github.com/NVIDIA/apex/issues/19
saw: dynamics hung; the ranks issued ALLTOALL_BASE and ALLREDUCE at the same NCCL sequence number until the watchdog fired.
mechanism: one collective per output key, keys taken from a set whose order depends on each process's string-hash seed; the ranks issue different collectives at the same step. (A per-rank order stands in for the hash seed.)
expect: hung distributed.peer_stuck
"""
import torch
import torch.distributed as dist
from _zoo import ready, two_ranks


def reduce_outputs(rank, keys):
    out = {}
    for k in keys:
        t = torch.ones(3)
        if k == "forces":
            parts = [torch.zeros(3) for _ in range(2)]
            dist.all_gather(parts, t)  # HANG-HERE
            out[k] = parts
        else:
            dist.all_reduce(t)  # HANG-HERE
            out[k] = t
    return out


def main(rank):
    keys = ["energy", "stress", "forces"]
    if rank == 1:
        keys.reverse()  # the set's iteration order under another hash seed
    ready()
    reduce_outputs(rank, keys)


if __name__ == "__main__":
    two_ranks(main)
