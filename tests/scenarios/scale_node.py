"""One "node" of a simulated multi-node job: a step every --interval seconds, then a barrier that every
node must reach (a byte appended to a shared file per step), like a collective. Once --hang-file
exists, node --hang-node stops in load_shard (HANG-HERE); the others then wait at the barrier for ever."""

import argparse
import os
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--node", type=int, required=True)
ap.add_argument("--nodes", type=int, required=True)
ap.add_argument("--dir", required=True)
ap.add_argument("--steps", type=int, default=1000)
ap.add_argument("--interval", type=float, default=0.5)
ap.add_argument("--hang-node", type=int, default=-1)
ap.add_argument("--hang-file", default="")
args = ap.parse_args()


def load_shard(step):
    if args.node == args.hang_node and args.hang_file and os.path.exists(args.hang_file):
        with open(os.path.join(args.dir, "hung_at"), "w") as f:
            f.write(repr(time.time()))
        threading.Event().wait()  # HANG-HERE


def barrier(step):
    path = os.path.join(args.dir, f"step{step}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(fd, b"x")
    os.close(fd)
    while os.stat(path).st_size < args.nodes:
        time.sleep(0.05)


for step in range(1, args.steps + 1):
    load_shard(step)
    time.sleep(args.interval)
    barrier(step)
    print(f"step {step}/{args.steps}", flush=True)
