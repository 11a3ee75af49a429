"""Workers reading from a slow disk: each batch arrives after seconds of silence; "I guess I had to wait more".

report: https://github.com/yvquanli/GLAM/issues/3
also: https://github.com/vacancy/NSCL-PyTorch-Release/issues/10
saw: stuck at "Building data loader", then "Nevermind, fixed it! Just had to wait for a bit".
mechanism: healthy: every sample is a read from a slow disk (a 1 MiB read, then 0.2 s), so a batch of 32 takes seconds.
expect: healthy
"""
import os
import tempfile
import time

import torch
from _zoo import ready, seconds
from torch.utils.data import DataLoader, Dataset

PATH = os.path.join(tempfile.gettempdir(), f"zoo-disk-{os.getpid()}.bin")


class OnDisk(Dataset):
    def __len__(self):
        return int(seconds(30) / 0.2)

    def __getitem__(self, i):
        with open(PATH, "rb") as f:
            f.read(1 << 20)
        time.sleep(0.2)  # an HDD's seek
        return torch.tensor([i])


if __name__ == "__main__":
    with open(PATH, "wb") as f:
        f.write(os.urandom(1 << 20))
    print("building data loader", flush=True)
    ready()
    for step, batch in enumerate(DataLoader(OnDisk(), batch_size=32, num_workers=2)):
        print(f"step {step}", flush=True)
    os.unlink(PATH)
