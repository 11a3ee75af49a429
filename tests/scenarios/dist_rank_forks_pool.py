"""Two gloo ranks; right after init_process_group, rank 0 maps its dataset with a forked multiprocessing Pool (as
`datasets.map(num_proc=...)` under `main_process_first` does) while rank 1 waits in a barrier. Healthy: it ends."""

import os
import socket
import sys
import time
from datetime import timedelta


def tokenize(shard: int) -> int:
    end, n = time.monotonic() + 1.0, 0
    while time.monotonic() < end:
        n += sum(len(str(i)) for i in range(2000))
    return shard


def rank_main(rank: int) -> None:
    import multiprocessing

    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=timedelta(minutes=5))
    if rank == 0:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            print("mapped", pool.map(tokenize, range(4)), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(2):
        os.environ.update(
            MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2"
        )
        procs.append(mp.get_context("spawn").Process(target=rank_main, args=(rank,)))
        procs[-1].start()
    for p in procs:
        p.join(timeout=120)
    ok = all(p.exitcode == 0 for p in procs)
    print("done" if ok else f"failed: {[p.exitcode for p in procs]}", flush=True)
    sys.exit(0 if ok else 1)
