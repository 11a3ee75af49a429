"""The first step of a torch.compile'd model: minutes of silent compiling, then fast steps.

report: https://github.com/pytorch/pytorch/issues/97783
also: https://github.com/2noise/ChatTTS/issues/713
saw: "The first epoch is very slow when using torch.compile"; "it will hang up for several minutes ... It looks like torch was compiling something".
mechanism: healthy: dynamo and inductor compile the graph (C++ compiler processes come and go) before the first step returns.
expect: healthy
"""
import os
import tempfile

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="zoo-inductor-"))
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")

import torch
from _zoo import ready

if __name__ == "__main__":
    blocks = int(os.environ.get("ZOO_COMPILE_BLOCKS", "4" if os.environ.get("ZOO_QUICK") else "12"))
    model = torch.compile(torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU())
                                                for _ in range(blocks)]))
    print("compiling", flush=True)
    ready()
    for step in range(50):
        model(torch.randn(8, 64)).sum().backward()
        print(f"step {step}", flush=True)
