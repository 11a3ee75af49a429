"""Small jobs the run benches supervise (kept apart so the benches read as measurements)."""

import os
import random
import re
import socket
import subprocess
import time


def throughput(cmd: list[str]) -> float:
    """Run a trainer below (directly or under hangwatch) and read the steps/s it reports."""
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout
    m = re.search(r"THROUGHPUT ([\d.]+)", out)
    if m is None:
        raise SystemExit(f"no throughput in output: {out[-500:]}")
    return float(m.group(1))


STEPPER = r"""
import sys, threading, time
interval, steps, mark = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for i in range(steps):
    print(f"step {i}", flush=True)
    time.sleep(interval)
print(f"step {steps}", flush=True)
with open(mark, "w") as f:
    f.write(repr(time.time()))   # the moment of the hang: right after the last progress
threading.Event().wait()
"""

TRAINER = r"""
import sys, time
import torch
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
seconds = float(sys.argv[1])
t0 = time.perf_counter(); n = 0
while time.perf_counter() - t0 < seconds:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); n += 1
    if n % 10 == 0:
        print(f"step {n} loss {loss.item():.4f}", flush=True)
print(f"THROUGHPUT {n / (time.perf_counter() - t0):.3f}", flush=True)
"""

FLOOD = r"""
import os, sys
total, size = int(sys.argv[1]) << 20, int(sys.argv[2])  # MiB in all, bytes per write
line = b"x" * 99 + b"\n"
block = (line * (size // 100 + 1))[:size - 1] + b"\n"
view = memoryview(block)
left = total
while left:
    chunk = view[:min(size, left)]
    while chunk:
        chunk = chunk[os.write(1, chunk):]
    left -= min(size, left)
"""

DIST_STEPPER = r"""
import os, sys, threading, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
interval, hang_step, mark = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for step in range(10**6):
    if step == hang_step and rank == world - 1:
        with open(mark, "w") as f:
            f.write(repr(time.time()))   # the last rank stops here: the moment of the hang
        threading.Event().wait()
    dist.all_reduce(torch.ones(1))
    if rank == 0:
        print(f"step {step}", flush=True)
    time.sleep(interval)
"""

# A loop of about 1,000 optimizer steps a second, each batch from a DataLoader: what autobeat hooks.
LOADER_TRAINER = r"""
import sys, time
import torch
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(128, 384), torch.nn.ReLU(), torch.nn.Linear(384, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(torch.randn(4096, 128), torch.randint(0, 10, (4096,))), batch_size=32)
seconds = float(sys.argv[1])
t0 = time.perf_counter(); n = 0
while time.perf_counter() - t0 < seconds:
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step(); n += 1
        if time.perf_counter() - t0 >= seconds:
            break
print(f"THROUGHPUT {n / (time.perf_counter() - t0):.3f}", flush=True)
"""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, below the kernel's ephemeral range (32768-60999 by default): no bind to port 0
    and no outgoing connection can take it before the job binds it (the tests' ports are 20000-31999)."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    for _ in range(1000):
        port = rng.randrange(10000, 20000)
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port in 10000-19999")
