"""torch.distributed.breakpoint(rank=1) under torchrun, rank 1's prompt filtered out of the output: rank 1 reads
standard input (opened again as /dev/stdin) at pdb's prompt, rank 0 waits in the barrier behind it."""

import os
import subprocess
import sys

if __name__ == "__main__":
    if os.environ.get("LOCAL_RANK") is None:
        sys.exit(subprocess.call([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                                  "--local-ranks-filter", "0", "--master-port", os.environ["HW_PORT"],
                                  os.path.abspath(__file__)]))
    import torch.distributed as dist
    from _ready import ready

    dist.init_process_group("gloo")
    ready()
    dist.breakpoint(rank=1)  # HANG-HERE
