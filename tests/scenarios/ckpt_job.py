"""A torch loop (autobeat's optimizer beats) that saves a checkpoint every --every steps with
torch.save into a slow file (--save-s seconds: autobeat's checkpoint phase), printing what it did."""

import argparse
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=1000)
ap.add_argument("--every", type=int, default=10)
ap.add_argument("--save-s", type=float, default=1.0)
ap.add_argument("--out", required=True)
args = ap.parse_args()


class SlowFile:
    """A file whose writes take --save-s in all (a checkpoint going to slow storage)."""

    def __init__(self, path: str) -> None:
        self.f = open(path, "wb")  # noqa: SIM115
        self.slept = False

    def write(self, b: bytes) -> int:
        if not self.slept:
            time.sleep(args.save_s)
            self.slept = True
        return self.f.write(b)

    def flush(self) -> None:
        self.f.flush()

    def close(self) -> None:
        self.f.close()


torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(1, args.steps + 1):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    time.sleep(0.05)
    print(f"step {step}/{args.steps}", flush=True)
    if step % args.every == 0:
        f = SlowFile(args.out)
        print(f"saving checkpoint at step {step}", flush=True)
        torch.save(model.state_dict(), f)
        f.close()
        print(f"saved checkpoint at step {step}", flush=True)
