"""A DataLoader worker is killed (as by the OOM killer); the main process raises and exits 1.

HW_LOSE_STDERR=1: the main process's traceback is lost, as under load when torch's SIGCHLD handler raises while it
is written ("lost sys.stderr"): only the main process's own reading of its workers can say what happened.
HW_SLOW_BODY=1: the loop's body takes a while, so torch's SIGCHLD handler raises there, outside the iterator, and the
loop's frame (the iterator with it) is gone by the time the error reaches sys.excepthook.
HW_LATE_SIGCHLD=1: the main thread blocks SIGCHLD (as when the kernel gives it to another thread, and the main's
wait is not interrupted): torch's own check, when the wait times out 5 s later, finds the dead worker and raises.
Meanwhile the worker is a zombie, which a look at --min-stall 1 must not call hung."""

import os
import signal
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Big(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 6:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.tensor([i])


if os.environ.get("HW_LATE_SIGCHLD") == "1":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
if os.environ.get("HW_LOSE_STDERR") == "1":
    sys.stderr = None  # what the traceback goes to: nothing
for step, _ in enumerate(DataLoader(Big(), batch_size=1, num_workers=2)):
    print(f"step {step}", flush=True)
    if os.environ.get("HW_SLOW_BODY") == "1":
        time.sleep(0.5)
