"""Trains 10 steps with a checkpoint per step; hangs at step 5 while --workers > 0 (a stuck worker
stand-in). Restarted with --workers 0 it resumes from the checkpoint and finishes."""

import argparse
import json
import os
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--workers", type=int, default=2)
ap.add_argument("--ckpt", required=True)
ap.add_argument("--crash-at", type=int, default=-1)
args = ap.parse_args()

start = 0
if os.path.exists(args.ckpt):
    with open(args.ckpt) as f:
        start = json.load(f)["step"]
    print(f"resumed from step {start} (attempt {os.environ.get('HANGWATCH_ATTEMPT')})", flush=True)
for step in range(start, 10):
    if step == args.crash_at:
        raise SystemExit(f"crashed at step {step}")
    if step == 5 and args.workers > 0:
        threading.Event().wait()  # HANG-HERE
    time.sleep(0.1)
    tmp = args.ckpt + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"step": step + 1}, f)
    os.replace(tmp, args.ckpt)
    print(f"step {step}", flush=True)
print("done", flush=True)
