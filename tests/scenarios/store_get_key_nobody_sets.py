"""Gossip averaging through a TCPStore (pytorch/pytorch#67972): each of 2 ranks sets its weights under its key and
reads a peer's, drawn from range(MAX_RANK) = 4, the size of the job the config was written for: a draw of rank 2 or 3
waits in store.get for a key nobody sets (its timeout, 12 h, set for slow peers). Both ranks end up there; main waits
in mp.spawn. Recorded as a fixture (tests/unit/test_rules_fixtures.py): no cause named, its place where the chain
stops, the rank's get."""

import pickle
import random
import socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

MAX_RANK = 4


def worker(rank: int, port: int, world: int) -> None:
    store = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=timedelta(hours=12))
    rng = random.Random(1958 + rank)
    w = torch.randn(512)
    for rnd in range(6):
        w = w - 0.01 * w
        store.set(f"w/{rank}/{rnd}", pickle.dumps(w))
        peer = rng.randrange(MAX_RANK)
        if peer == rank:
            continue
        other = pickle.loads(store.get(f"w/{peer}/{rnd}"))  # noqa: S301  # HANG-HERE
        w = (w + other) / 2
        print(f"rank {rank} round {rnd}: averaged with rank {peer}", flush=True)


if __name__ == "__main__":
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    mp.spawn(worker, args=(port, 2), nprocs=2)
