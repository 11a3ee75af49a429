"""A job that "holds GPU memory" on the fake GPU hangwatch reads ($HANGWATCH_GPU_FAKE): it adds its own
pid to the fake's process list (--hold MiB, freed --release-after seconds after it exits; -1: never),
then steps like stepper.py and hangs at --hang-at unless --safe."""

import argparse
import json
import os
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--hold", type=float, default=30000.0)
ap.add_argument("--release-after", type=float, default=0.0)
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--hang-at", type=int, default=-1)
ap.add_argument("--safe", action="store_true")
args = ap.parse_args()

fake = os.environ["HANGWATCH_GPU_FAKE"]
with open(fake) as f:
    data = json.load(f)
data["processes"].append({"pid": os.getpid(), "gpu": 0, "used_mib": args.hold, "release_after_exit_s": args.release_after})
with open(fake + ".tmp", "w") as f:
    json.dump(data, f)
os.replace(fake + ".tmp", fake)

for step in range(1, args.steps + 1):
    if step == args.hang_at and not args.safe:
        threading.Event().wait()  # HANG-HERE
    time.sleep(0.1)
    print(f"step {step}/{args.steps}", flush=True)
