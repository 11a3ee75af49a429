"""Two pipeline stages started as multiprocessing.Process children, each calling init_process_group(rank=...,
world_size=...) itself, as torch's own tutorial does: no RANK in their environment. Stage 0 sends the labels (tag 1)
before the activations (tag 0); stage 1 receives the activations first: a gloo send completes only on a receive
with its tag, so each waits for the other (diffusion-pipe#409). `python dist_process_ranks.py hang`; `python
dist_process_ranks.py SECONDS`: stage 1 receives in stage 0's order after SECONDS of set-up, and the job ends."""

import datetime
import multiprocessing as mp
import socket
import sys
import time

import torch
import torch.distributed as dist

SECONDS = 0.0 if sys.argv[1] == "hang" else float(sys.argv[1])


def stage(rank: int, world_size: int, port: int) -> None:
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(days=2),
    )
    labels, act = torch.zeros(8, dtype=torch.long), torch.zeros(4)
    if rank == 0:
        dist.send(torch.arange(8), dst=1, tag=1)  # HANG-HERE
        dist.send(torch.ones(4), dst=1, tag=0)
    else:
        if SECONDS:
            time.sleep(SECONDS)  # loads its weights first
            dist.recv(labels, src=0, tag=1)
        dist.recv(act, src=0, tag=0)
        if not SECONDS:
            dist.recv(labels, src=0, tag=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("fork")
    ranks = [ctx.Process(target=stage, args=(r, 2, port), name=f"stage{r}") for r in range(2)]
    for p in ranks:
        p.start()
    for p in ranks:
        p.join()
    print("done", flush=True)
    sys.exit(max(p.exitcode or 0 for p in ranks))
