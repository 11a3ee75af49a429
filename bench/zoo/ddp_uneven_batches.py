"""DDP ranks with different numbers of batches: the rank with an extra batch waits in backward forever.

report: https://github.com/pytorch/pytorch/issues/33148
also: https://github.com/pytorch/pytorch/issues/141069
saw: DDP training froze near the end of an epoch (with NCCL: a watchdog timeout after 30 min).
mechanism: the rank with the extra batch launches the gradient all_reduce in backward; its peer has left the loop and waits in a barrier: different collectives, nobody completes.
expect: hung distributed.peer_stuck
"""
import torch
import torch.distributed as dist
from _zoo import ready, two_ranks
from torch.nn.parallel import DistributedDataParallel as DDP


def main(rank):
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = 5 if rank == 0 else 4  # an IterableDataset split unevenly across ranks
    for step in range(batches):
        loss = model(torch.randn(4, 8)).sum()
        if step == 4:
            ready()
        loss.backward()  # HANG-HERE (rank 0: the extra batch's all_reduce)
        opt.step()
        print(f"rank {rank} step {step}", flush=True)
    dist.barrier()  # HANG-HERE


if __name__ == "__main__":
    two_ranks(main)
