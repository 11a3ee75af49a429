"""Two ranks under torchrun (gloo): rank 1 is stuck loading its shard, rank 0 waits in all_reduce. argv[1] "net":
rank 1 waits on a read from a data server that never answers (a wait that may pass), instead of an event that
nothing sets (a bug in the code)."""

import socket
import sys
import threading

import torch
import torch.distributed as dist
from _ready import ready

import hangwatch


def load_shard(rank):
    if rank == 1:
        ready(f"rank{rank}")
        if sys.argv[1:] == ["net"]:
            server = socket.create_server(("127.0.0.1", 0))
            socket.create_connection(server.getsockname()).recv(1)  # HANG-HERE:net
        threading.Event().wait()  # HANG-HERE:culprit
    return torch.ones(4)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for step in range(100):
        x = load_shard(rank) if step == 2 else torch.ones(4)
        if rank == 0 and step == 2:
            ready(f"rank{rank}")
        dist.all_reduce(x)  # HANG-HERE:victim
        hangwatch.beat(step)  # per-rank progress under `hangwatch run`; a no-op otherwise


if __name__ == "__main__":
    main()
