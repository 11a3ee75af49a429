"""A large checkpoint written to slow storage: minutes of silence between steps.

report: https://github.com/pytorch/pytorch/issues/3999
also: https://github.com/epfLLM/Megatron-LLM/issues/69
saw: a 3.5 GB torch.save took 2 h 49 min; Megatron saves took 5, then 15 minutes.
mechanism: healthy: the checkpoint's bytes move to a slow filesystem steadily, 1 MiB at a time.
expect: healthy
"""
import io
import os
import tempfile
import time

import torch
from _zoo import ready, seconds

if __name__ == "__main__":
    for step in range(20):
        print(f"step {step}", flush=True)
        time.sleep(0.05)
    buf = io.BytesIO()
    torch.save({"w": torch.randn(16 << 20)}, buf)  # 64 MiB
    data = buf.getbuffer()
    path = os.path.join(tempfile.gettempdir(), f"zoo-ckpt-{os.getpid()}.pt")
    print("saving checkpoint", flush=True)
    ready()
    pause = seconds(30) / (len(data) >> 20)
    with open(path, "wb") as f:
        for off in range(0, len(data), 1 << 20):  # an NFS mount writes slowly
            f.write(data[off:off + (1 << 20)])
            f.flush()
            time.sleep(pause)
        os.fsync(f.fileno())
    os.unlink(path)
    print("checkpoint saved; step 20", flush=True)
