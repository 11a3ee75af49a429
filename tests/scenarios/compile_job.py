"""torch.compile of a model: a long first compile that prints nothing."""

import os

import torch
from _ready import ready


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(64, 64) for _ in range(24))

    def forward(self, x):
        for i, b in enumerate(self.blocks):
            x = torch.relu(b(x)) + x * (i % 3)
        return x


if __name__ == "__main__":
    os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
    model = torch.compile(Net())
    ready()
    for n in range(1, 40):
        model(torch.randn(n * 7, 64))  # HANG-HERE
