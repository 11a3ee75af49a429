"""A batch sampler that grows a batch the dataset can never fill: the first batch never comes.

report: https://github.com/instructlab/training/issues/170
saw: "Infinite loop until int overflow when calculating batch sizes for small datasets" in the multipack sampler.
mechanism: the sampler adds samples until the batch reaches a target size; past the end of a small dataset it adds nothing, and its index grows forever.
expect: hung code.busy_loop
"""
from _zoo import ready
from torch.utils.data import DataLoader, Sampler


class Multipack(Sampler):
    def __init__(self, n, target):
        self.n, self.target = n, target

    def __iter__(self):
        idx, batch, i = list(range(self.n)), [], 0
        ready()
        while len(batch) < self.target:  # HANG-HERE
            batch += idx[i:i + 1]
            i += 1
        yield batch


if __name__ == "__main__":
    loader = DataLoader(list(range(10)), batch_sampler=Multipack(10, 32))
    for step, batch in enumerate(loader):
        print(f"step {step} {batch}", flush=True)
