"""torch.distributed.breakpoint(rank=1) with rank 1's output filtered away: its prompt is never seen.

report: https://github.com/pytorch/torchtitan/issues/652
also: https://github.com/pytorch/pytorch/issues/154563
saw: torch.distributed.breakpoint(rank=1) was "always hanging": --local-ranks-filter 0 hid rank 1's prompt.
mechanism: rank 1 sits in pdb reading its standard input, a terminal where nobody types; rank 0 waits in the barrier inside breakpoint().
expect: hung process.waits_for_input
accept: distributed.peer_stuck
stdin: tty
"""
import os
import subprocess
import sys

from _zoo import free_port

if __name__ == "__main__":
    if os.environ.get("LOCAL_RANK") is None:
        sys.exit(subprocess.call([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                                  "--local-ranks-filter", "0", "--master-port", str(free_port()),
                                  os.path.abspath(__file__)]))
    import torch.distributed as dist
    from _zoo import ready

    dist.init_process_group("gloo")
    print(f"rank {dist.get_rank()} initialised", flush=True)
    ready()
    dist.breakpoint(rank=1)  # HANG-HERE
