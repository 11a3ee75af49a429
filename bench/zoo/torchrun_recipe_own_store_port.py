"""A recipe written for `python train.py` launched with torchrun: every rank waits at init_process_group for a store nobody hosts.

report: https://github.com/pytorch/pytorch/issues/191989
saw: under torchrun the job printed nothing and waited at init_process_group on every rank.
mechanism: the script rendezvouses at its own tcp:// port; torchrun's workers get TORCHELASTIC_USE_AGENT_STORE and become clients of a store the agent never created on that port, so every rank waits for a server (the group's 30 min timeout ends it).
expect: waiting distributed.rendezvous_wait
"""
import os
import subprocess
import sys

from _zoo import free_port, ready

if __name__ == "__main__":
    if "LOCAL_RANK" not in os.environ:  # the launcher: torchrun, as the cluster's job script does
        env = dict(os.environ, RECIPE_PORT=str(free_port()))
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", __file__]
        sys.exit(subprocess.call(cmd, env=env))
    import torch
    import torch.distributed as dist

    # the recipe was written for `python train.py`: its own rendezvous port, rank and world size from the env
    ready()
    dist.init_process_group(  # HANG-HERE
        "gloo",
        init_method=f"tcp://127.0.0.1:{os.environ['RECIPE_PORT']}",
        rank=int(os.environ["RANK"]),
        world_size=int(os.environ["WORLD_SIZE"]),
    )
    t = torch.ones(1)
    dist.all_reduce(t)
    print("rank", dist.get_rank(), "sum", t.item(), flush=True)
    dist.destroy_process_group()
