"""Rank 1 polls for a marker file another process writes later, while rank 0 already waits in the barrier: healthy.

report: https://github.com/NVIDIA-NeMo/nemo-platform/pull/479
also: https://github.com/mosaicml/composer/pull/2071
saw: "Coordinator doesn't wait for itself ... marker = self._marker_path(barrier_name, rank=0)": ranks wait on a marker
file until the coordinator publishes it, then meet in the process group.
mechanism: healthy: rank 1 sleeps and wakes in `while not os.path.exists(marker)` (the condition is the file system's:
any process may create it) while rank 0 waits in the barrier; a helper writes the marker after a while, then both
train.
expect: healthy
"""

import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.distributed as dist
from _zoo import ready, seconds, two_ranks


def main(rank):
    marker = os.path.join(tempfile.gettempdir(), f"zoo-marker-{os.getppid()}")
    if rank == 1:
        helper = f"import time, pathlib; time.sleep({seconds(30)}); pathlib.Path({marker!r}).touch()"
        subprocess.Popen([sys.executable, "-c", helper])  # the coordinator's stand-in: it publishes the marker later
        print("rank 1 waiting for the marker", flush=True)
        ready()
        deadline = time.monotonic() + 4 * seconds(30)  # every wait has a bound: a helper that died ends it too
        while not os.path.exists(marker) and time.monotonic() < deadline:
            time.sleep(1)
        if os.path.exists(marker):
            os.unlink(marker)
    dist.barrier()
    for step in range(3):
        t = torch.ones(2)
        dist.all_reduce(t)
        print(f"rank {rank} step {step}", flush=True)


if __name__ == "__main__":
    two_ranks(main)
