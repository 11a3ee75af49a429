"""An async checkpoint writer process died (disk full); the trainer's put on the bounded torch.multiprocessing queue waits forever.

report: https://github.com/ssube/onnx-web/issues/276
also: https://github.com/python/cpython/issues/87971 ("multiprocessing.Queue hangs when process on other side dies")
saw: "The progress worker can crash in some unknown circumstances ... and eventually the progress queue fills up".
mechanism: Queue(maxsize=2).put() takes a slot from a semaphore that only the consumer's get() gives back. The writer raised at its third checkpoint and exited (its traceback is in the log); two more snapshots fill the queue and the next put() waits on the semaphore forever: no other process reads the queue and nothing tells put() the reader died.
expect: hung code.deadlock
accept: process.waits_on
"""
import os
import tempfile

import torch
import torch.multiprocessing as mp
from _zoo import ready


def ckpt_writer(ckpt_queue, out_dir):
    while True:
        step, state = ckpt_queue.get()
        if step == 3:  # stands in for a full disk
            raise OSError(28, "No space left on device", os.path.join(out_dir, f"step{step}.pt"))
        torch.save(state, os.path.join(out_dir, f"step{step}.pt"))


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    ckpt_queue = ctx.Queue(maxsize=2)  # at most two snapshots in flight
    writer = ctx.Process(target=ckpt_writer, args=(ckpt_queue, tempfile.mkdtemp()), name="ckpt-writer", daemon=True)
    writer.start()
    model = torch.nn.Linear(256, 256)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(1, 50):
        loss = model(torch.randn(32, 256)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
        snapshot = {k: v.detach().clone() for k, v in model.state_dict().items()}  # moved to shared memory by put
        if step == 6:
            ready()
        ckpt_queue.put((step, snapshot))  # HANG-HERE
