"""The checkpoint writer is alive but slow (~3.6 s per snapshot); the trainer waits ~14 s for it at the end.

report: https://github.com/ssube/onnx-web/issues/276
mechanism: the bounded queue throttles the trainer to the writer's pace: put() waits for a free slot while the writer saves (asleep in pieces, as on a slow network filesystem), and the trainer then joins the writer, which drains the last snapshots and exits. Silent for ~14 s after step 5, then exit 0.
expect: healthy
"""
import os
import tempfile
import time

import torch
import torch.multiprocessing as mp
from _zoo import ready, seconds


def ckpt_writer(ckpt_queue, out_dir, per_save):
    while (item := ckpt_queue.get()) is not None:
        step, state = item
        deadline = time.monotonic() + per_save  # a slow network filesystem
        while time.monotonic() < deadline:
            time.sleep(0.25)
        torch.save(state, os.path.join(out_dir, f"step{step}.pt"))


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    ckpt_queue = ctx.Queue(maxsize=2)
    writer = ctx.Process(target=ckpt_writer, args=(ckpt_queue, tempfile.mkdtemp(), seconds(18) / 5),
                         name="ckpt-writer", daemon=True)
    writer.start()
    model = torch.nn.Linear(256, 256)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(1, 6):
        loss = model(torch.randn(32, 256)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
        if step == 5:
            ready()
        ckpt_queue.put((step, {k: v.detach().clone() for k, v in model.state_dict().items()}))
    ckpt_queue.put(None)
    writer.join()
    print("all checkpoints written", flush=True)
