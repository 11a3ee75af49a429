"""Prints `step i/N` every --interval seconds, checkpointing each step to --ckpt (resumed from it).
--hang-at K: hangs before step K unless --safe is given (the fallback a restart adds); --slow: each
step takes twice as long (so a fallback's rate can be measured); --crash-at K: exits 1 there;
--fast-after K: steps after K take a tenth of --interval (a job that speeds up); --hang-how net: the hang is a
read from a data server that accepted the connection and never answers (a wait that may pass: worth a requeue),
instead of an event nothing sets (a bug in the code)."""

import argparse
import json
import os
import socket
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--interval", type=float, default=0.2)
ap.add_argument("--hang-at", type=int, default=-1)
ap.add_argument("--crash-at", type=int, default=-1)
ap.add_argument("--safe", action="store_true")
ap.add_argument("--slow", action="store_true")
ap.add_argument("--ckpt", default="")
ap.add_argument("--fast-after", type=int, default=-1)
ap.add_argument("--hang-how", choices=("event", "net"), default="event")
args = ap.parse_args()

start = 0
if args.ckpt and os.path.exists(args.ckpt):
    with open(args.ckpt) as f:
        start = json.load(f)["step"]
for step in range(start + 1, args.steps + 1):
    if step == args.hang_at and not args.safe and args.hang_how == "net":
        server = socket.create_server(("127.0.0.1", 0))
        socket.create_connection(server.getsockname()).recv(1)  # HANG-HERE:net
    if step == args.hang_at and not args.safe:
        threading.Event().wait()  # HANG-HERE
    if step == args.crash_at:
        raise SystemExit(f"crashed at step {step}")
    fast = 0 <= args.fast_after < step
    time.sleep(args.interval * (2 if args.slow else 1) / (10 if fast else 1))
    print(f"step {step}/{args.steps}", flush=True)
    if args.ckpt:
        with open(args.ckpt + ".tmp", "w") as f:
            json.dump({"step": step}, f)
        os.replace(args.ckpt + ".tmp", args.ckpt)
