"""A breakpoint() left in a Dataset's __getitem__, run by a DataLoader worker: multiprocessing gives the worker
/dev/null for standard input, so pdb reads the end of input at once and quits with BdbQuit, which the main process
raises again ("Caught BdbQuit in DataLoader worker process N"): the job ends with status 1."""

import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 5:
            breakpoint()  # left in while looking at a bad sample
        return torch.tensor([i])


if __name__ == "__main__":
    for batch in DataLoader(Samples(), batch_size=4, num_workers=2):
        pass
    print("done", flush=True)
