"""An example training job that hangs the way seed 000's did: stuck at step 0 of an epoch.

One shard read never returns inside a DataLoader worker. Run it, then ask hangwatch where it is:

    python examples/stuck_dataloader.py & sleep 15; hangwatch inspect $!

It ends itself (workers included) after --exit-after seconds, so it never lingers.
"""

import argparse
import multiprocessing
import os
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset


class TokenShards(Dataset):
    def __len__(self):
        return 18968

    def __getitem__(self, idx):
        if idx == 7:
            self.read_shard_from_network_mount(idx)
        return torch.randint(0, 50000, (128,))

    def read_shard_from_network_mount(self, idx):
        threading.Event().wait()  # the read that never returns


def end_everything_after(seconds):
    time.sleep(seconds)
    for child in multiprocessing.active_children():
        child.kill()
    os._exit(3)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--exit-after", type=float, default=120.0)
    args = ap.parse_args()
    threading.Thread(target=end_everything_after, args=(args.exit_after,), daemon=True).start()
    loader = DataLoader(TokenShards(), batch_size=4, num_workers=2)
    for step, _batch in enumerate(loader):
        print(f"Epoch 1: step {step}/{len(loader)}", flush=True)
