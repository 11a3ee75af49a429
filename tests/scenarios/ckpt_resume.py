"""A small torch job that checkpoints with torch.save every --every steps, prints `step i/N`, and in
its first --hang-attempts attempts (HANGWATCH_ATTEMPT) hang before step --hang-at (HANG-HERE). --resume PATH loads
a checkpoint and goes on after its step (what a restart passes with --resume-arg '--resume {checkpoint}')."""

import argparse
import os
import threading
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--every", type=int, default=5)
ap.add_argument("--hang-at", type=int, default=-1)
ap.add_argument("--interval", type=float, default=0.05)
ap.add_argument("--out", required=True)
ap.add_argument("--resume", default="")
ap.add_argument("--hang-attempts", type=int, default=1)
args = ap.parse_args()

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
start = 0
if args.resume:
    state = torch.load(args.resume)
    model.load_state_dict(state["model"])
    start = state["step"]
    print(f"resumed from step {start}", flush=True)
hangs_now = int(os.environ.get("HANGWATCH_ATTEMPT", "1")) <= args.hang_attempts
for step in range(start + 1, args.steps + 1):
    if step == args.hang_at and hangs_now:
        threading.Event().wait()  # HANG-HERE
    time.sleep(args.interval)
    opt.zero_grad()
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
    print(f"step {step}/{args.steps}", flush=True)
    if step % args.every == 0:
        torch.save({"model": model.state_dict(), "step": step}, os.path.join(args.out, f"ckpt-{step}.pt"))
