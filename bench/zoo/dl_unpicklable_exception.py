"""An exception raised in a worker whose class cannot be pickled: the error is never shown, the job hangs.

report: https://github.com/safetensors/safetensors/issues/492
saw: a SafetensorError raised in __getitem__ inside a DataLoader worker hung the job and printed a pickling error instead of the exception.
mechanism: the worker wraps the exception in ExceptionWrapper, which pickles the exception class by reference; a class that cannot be imported by name fails in the feeder thread, so the batch (here: the error) is lost as in #142884.
expect: hung dataloader.batch_lost
"""
import torch
from _zoo import ready
from torch.utils.data import DataLoader, Dataset


def _error_class():
    class SafetensorError(Exception):  # a local class: pickle cannot find it by name
        pass
    return SafetensorError


class Tensors(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 2:
            ready()
            raise _error_class()("header too large")
        return torch.tensor([i])


if __name__ == "__main__":
    for step, batch in enumerate(DataLoader(Tensors(), batch_size=1, num_workers=1)):  # HANG-HERE
        print(f"step {step}", flush=True)
