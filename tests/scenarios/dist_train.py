"""Two ranks under torchrun (gloo) train a few optimizer steps and exit; nothing calls hangwatch."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    opt.zero_grad()
    loss = model(torch.randn(2, 4)).sum()
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    opt.step()
dist.destroy_process_group()
