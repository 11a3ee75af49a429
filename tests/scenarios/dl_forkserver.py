"""A DataLoader under the `forkserver` start method (Python 3.14's default on Linux): its workers are the forkserver's
children, not main's. argv[1]: `10`, the sample at index 3 takes 10 s (healthy, exit 0); `hang`, its read waits on
an Event nothing can set."""

import sys
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, idx):
        if idx == 3:
            if sys.argv[1] == "hang":
                threading.Event().wait()  # HANG-HERE
            time.sleep(float(sys.argv[1]))
        return torch.tensor([idx])


if __name__ == "__main__":
    loader = DataLoader(Shards(), batch_size=1, num_workers=2, multiprocessing_context="forkserver")
    for step, batch in enumerate(loader):
        print(f"step {step}", flush=True)
    print("done", flush=True)
