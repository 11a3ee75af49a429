"""Peers are drawn from the real world size; rank 1 spends ~15 s loading its next shard, so rank 0 waits in store.get.

report: https://github.com/pytorch/pytorch/issues/67972
mechanism: every drawn peer exists and publishes each round; rank 1 pauses ~15 s (asleep in pieces, loading a shard) before round 2, so rank 0 waits in TCPStore.get for "w/1/2" until rank 1 sets it, then both finish.
expect: healthy
"""
import pickle
import random
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from _zoo import free_port, ready, seconds


def worker(rank, port, world):
    store = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=timedelta(hours=12))
    rng = random.Random(1958 + rank)
    w = torch.randn(512)
    for rnd in range(4):
        if rnd == 2:
            ready()
            if rank == 1:  # load the next data shard (slow, silent)
                deadline = time.monotonic() + seconds(15)
                while time.monotonic() < deadline:
                    time.sleep(0.5)
        w = w - 0.01 * w
        store.set(f"w/{rank}/{rnd}", pickle.dumps(w))
        peer = rng.choice([r for r in range(world) if r != rank])  # only ranks that exist
        other = pickle.loads(store.get(f"w/{peer}/{rnd}"))  # rank 0 waits ~15 s here in round 2
        w = (w + other) / 2
        print(f"rank {rank} round {rnd}: averaged with rank {peer}, |w|={w.norm():.3f}", flush=True)
    store.set(f"done/{rank}", "1")
    store.wait([f"done/{1 - rank}"])  # rank 0 hosts the store: leave together


if __name__ == "__main__":
    mp.spawn(worker, args=(free_port(), 2), nprocs=2)
