"""A plain PyTorch loop that prints nothing at all; its main process hangs after --hang-at optimizer
steps. Only the injected heartbeats can tell hangwatch how far it got."""

import argparse
import threading
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--hang-at", type=int, default=-1)
args = ap.parse_args()

torch.set_num_threads(1)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(torch.randn(args.steps * 2, 4), torch.randn(args.steps * 2, 1)), batch_size=2)
for step, (x, y) in enumerate(loader, 1):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    time.sleep(0.02)
    if step == args.hang_at:
        threading.Event().wait()  # HANG-HERE
