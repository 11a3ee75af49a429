"""accelerator.wait_for_everyone() in the else branch of `if is_main_process: save()`: no progress after the save.

report: https://github.com/huggingface/accelerate/issues/2690
also: https://github.com/huggingface/accelerate/issues/1752
saw: after the save "no progress was made"; the code was `if accelerator.is_main_process: ...save... else: accelerator.wait_for_everyone()`.
mechanism: only the non-main ranks reach the barrier; the main rank goes on to the next backward's all_reduce.
expect: hung distributed.peer_stuck
"""
import io
import os
import subprocess
import sys

from _zoo import free_port

if __name__ == "__main__":
    if os.environ.get("LOCAL_RANK") is None:  # the launcher: 2 processes on this machine
        sys.exit(subprocess.call([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                                  "--master-port", str(free_port()), os.path.abspath(__file__)]))
    import torch
    from _zoo import ready
    from accelerate import Accelerator

    acc = Accelerator(cpu=True)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = acc.prepare(model, opt)
    for epoch in range(3):
        for step in range(3):
            loss = model(torch.randn(4, 8)).sum()
            acc.backward(loss)  # HANG-HERE (the main rank: backward's all_reduce)
            opt.step()
            opt.zero_grad()
        acc.print(f"epoch {epoch} done")
        ready()
        if acc.is_main_process:
            torch.save(acc.unwrap_model(model).state_dict(), io.BytesIO())  # the save, leaving no file
        else:
            acc.wait_for_everyone()  # HANG-HERE
