"""Under torchrun, rank 0 hosts the recipe's own store after building its data index: rank 1 retries its connect meanwhile.

report: https://github.com/pytorch/pytorch/issues/191989
saw: the working form: a TCPStore one rank hosts (is_master) on the recipe's port, passed to init_process_group.
mechanism: healthy: rank 1 retries its connection to a port nobody listens on yet while rank 0 works (asleep in pieces); rank 0 then listens, both join and the job ends.
expect: healthy
"""
import os
import subprocess
import sys
import time
from datetime import timedelta

from _zoo import free_port, ready, seconds

if __name__ == "__main__":
    if "LOCAL_RANK" not in os.environ:
        env = dict(os.environ, RECIPE_PORT=str(free_port()))
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", __file__]
        sys.exit(subprocess.call(cmd, env=env))
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if rank == 0:  # builds the data index first (silent), then hosts the recipe's own store
        deadline = time.monotonic() + seconds(12)
        while time.monotonic() < deadline:
            time.sleep(0.5)
    else:
        ready()
    port = int(os.environ["RECIPE_PORT"])
    store = dist.TCPStore("127.0.0.1", port, world, is_master=(rank == 0), timeout=timedelta(minutes=5))
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world)
    t = torch.ones(1)
    dist.all_reduce(t)
    dist.destroy_process_group()
