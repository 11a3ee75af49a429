"""Trains, then hits a recompile (new input shape) that takes several seconds, then trains on.

Its own inductor cache, empty at each run: a cache left warm by earlier runs on the same machine made the
recompiles too quick to be looked at (a clean-clone CI run saw no slow phase at all)."""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="hw-inductor-")
atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], True)

import torch  # noqa: E402 - after the cache directory is chosen


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(32, 32) for _ in range(12))

    def forward(self, x):
        for b in self.blocks:
            x = torch.relu(b(x)) + x
        return x


model = Net()
for step in range(10):
    model(torch.randn(8, 32))
    print(f"step {step}", flush=True)
compiled = torch.compile(model, dynamic=False)
for step in range(10, 12):
    compiled(torch.randn(8 + step, 32))  # every new shape recompiles  # RECOMPILE-HERE
    print(f"step {step}", flush=True)
print("done", flush=True)
