"""Rank 0 stuck in its data loading; the other ranks wait in the gradient all_reduce.

report: https://github.com/pytorch/pytorch/issues/87995
also: https://github.com/facebookresearch/fairseq/issues/4816
saw: on 32 ranks, rank 0 froze in the data iterator (queue.get) after 1-3 epochs while the other 31 waited in all_reduce; num_workers=0 avoided it.
mechanism: a peer is stuck outside any collective, in a DataLoader worker, so the others wait in backward's all_reduce.
expect: hung distributed.peer_stuck
accept: dataloader.worker_stuck
"""
import time

import torch
from _zoo import ready, two_ranks
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __init__(self, rank):
        self.rank = rank

    def __len__(self):
        return 16

    def __getitem__(self, i):
        if self.rank == 0 and i == 3:
            ready()
            time.sleep(10**9)  # HANG-HERE
        return torch.randn(8)


def main(rank):
    model = DDP(torch.nn.Linear(8, 1))
    for step, x in enumerate(DataLoader(Shards(rank), batch_size=1, num_workers=1)):  # HANG-HERE (rank 0: waits for its own worker)
        model(x).sum().backward()
        print(f"rank {rank} step {step}", flush=True)


if __name__ == "__main__":
    two_ranks(main)
