"""A rank that catches an out-of-memory error and skips the batch desyncs the collectives.

report: https://github.com/pytorch/pytorch/issues/44353
saw: one rank caught a GPU OOM and skipped the batch; the other ranks blocked (mrshenli: skipping communication after an OOM desyncs the collectives).
mechanism: the skipping rank runs one fewer backward all_reduce; later all_reduces pair up off by one and the last one is stranded while the skipper waits in the barrier.
expect: hung distributed.peer_stuck
"""
import torch
import torch.distributed as dist
from _zoo import ready, two_ranks
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank):
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(5):
        opt.zero_grad()
        try:
            if rank == 1 and step == 2:
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
            loss = model(torch.randn(4, 8)).sum()
            loss.backward()  # HANG-HERE (rank 0: the all_reduce rank 1 skipped)
            opt.step()
        except RuntimeError as e:
            print(f"rank {rank} step {step}: {e}; skipping the batch", flush=True)
            continue
        print(f"rank {rank} step {step}", flush=True)
    ready()
    dist.barrier()  # HANG-HERE


if __name__ == "__main__":
    two_ranks(main)
