"""A training job whose DataLoader meets one bad sample, for `--on-hang heal`. Index BAD of a map-style dataset:
`--mode flaky` waits forever the first time it is read (a read from a mount that stopped answering once), then
reads fine; `poison` waits forever every time (a poisoned file); `slow` sleeps `--slow-s` (3) seconds once (a slow
read, a back-off: a healthy twin); `good`: no bad sample. `--die-at I`: reading index I kills its worker the first time (the OOM killer). `--skip BAD` is the clean run a
healed poisoned run must equal: the sample is left out of its batch by the collate function, nothing hangs.

It trains a linear model on every batch (SGD, one thread) and writes its final weights and the samples it saw to
`--out` (JSON), so a test can tell that no batch was lost or repeated."""

import argparse
import json
import os
import signal
import threading
import time

import torch
from _ready import ready
from torch.utils.data import DataLoader, Dataset, default_collate

BAD = 21
N = 64


def once(state, tag):
    """True the first time any process asks (a file created exclusively)."""
    try:
        os.close(os.open(os.path.join(state, f"{tag}-{BAD}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


class Shards(Dataset):
    def __init__(self, mode, state, skip, die_at, slow_s=3.0):
        self.mode, self.state, self.skip, self.die_at, self.slow_s = mode, state, skip, die_at, slow_s

    def __len__(self):
        return N

    def __getitem__(self, index):
        path = f"/mnt/shards/shard-{index:04d}.bin"  # noqa: F841 - what a capture reads among the locals
        if index == self.skip:
            return None
        if index == self.die_at and once(self.state, "die"):
            os.kill(os.getpid(), signal.SIGKILL)
        if index == BAD:
            if self.mode == "poison" or (self.mode == "flaky" and once(self.state, "flaky")):
                ready()
                threading.Event().wait()  # HANG-HERE
            if self.mode == "slow" and once(self.state, "slow"):
                ready()
                time.sleep(self.slow_s)  # SLEEP-HERE
        x = torch.tensor([index / N, 1.0 - index / N, (index % 7) / 7])
        return index, x, torch.tensor([float(index % 3)])


def collate(items):
    return default_collate([i for i in items if i is not None])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("flaky", "poison", "slow", "good"), default="good")
    ap.add_argument("--die-at", type=int, default=-1)
    ap.add_argument("--slow-s", type=float, default=3.0, help="--mode slow: how long the one slow read takes")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--spawn", action="store_true")
    ap.add_argument("--persistent", action="store_true")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--skip", type=int, default=-1)
    ap.add_argument("--state", default=os.environ.get("HW_READY", "/tmp") + ".state")
    ap.add_argument("--out")
    args = ap.parse_args()
    os.makedirs(args.state, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(
        Shards(args.mode, args.state, args.skip, args.die_at, args.slow_s),
        batch_size=4,
        num_workers=args.workers,
        collate_fn=collate,
        multiprocessing_context="spawn" if args.spawn else None,
        persistent_workers=args.persistent,
    )
    seen = []
    step = 0
    for epoch in range(args.epochs):
        for index, x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen.append(index.tolist())
            step += 1
            print(f"epoch {epoch} step {step}", flush=True)
            time.sleep(0.02)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"weights": [p.detach().flatten().tolist() for p in model.parameters()], "seen": seen}, f)
    print("done", flush=True)
