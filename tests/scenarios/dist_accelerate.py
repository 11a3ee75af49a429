"""Two ranks under `accelerate launch --multi_gpu --num_processes 2` on CPU (gloo): after the save, only the
other rank calls accelerator.wait_for_everyone() (in the else branch); the main rank goes on to the next
backward's all_reduce (huggingface/accelerate#2690)."""

import io

import torch
from _ready import ready
from accelerate import Accelerator

acc = Accelerator(cpu=True)
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model, opt = acc.prepare(model, opt)
for epoch in range(3):
    for _ in range(3):
        loss = model(torch.randn(4, 8)).sum()
        acc.backward(loss)  # HANG-HERE:main
        opt.step()
        opt.zero_grad()
    acc.print(f"epoch {epoch} done")
    ready(f"rank{acc.process_index}")
    if acc.is_main_process:
        torch.save(acc.unwrap_model(model).state_dict(), io.BytesIO())  # the save, leaving no file
    else:
        acc.wait_for_everyone()  # HANG-HERE:else
