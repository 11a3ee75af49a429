"""Datasets written to hang or fail the ways users' datasets do, for `hangwatch probe-data` tests."""

import os
import signal
import threading
import time

import torch
from torch.utils.data import Dataset, IterableDataset, get_worker_info

N = 48

# --- hangs only with fork: a lock a parent thread holds while the workers fork ---------------------------
_stats_lock = threading.Lock()


def _hold_lock_most_of_the_time():
    while True:
        with _stats_lock:
            time.sleep(0.2)
        time.sleep(0.002)


class LoggedDataset(Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        with _stats_lock:  # HANG-HERE:fork
            pass
        return torch.tensor([float(i)])


def fork_hazard():
    threading.Thread(target=_hold_lock_most_of_the_time, daemon=True).start()
    return LoggedDataset()


# --- one index hangs, one index raises ------------------------------------------------------------------------
class Shards(Dataset):
    def __init__(self, hang=None, fail=None):
        self.hang, self.fail = hang, fail

    def __len__(self):
        return N

    def __getitem__(self, i):
        if i == self.hang:
            threading.Event().wait()  # HANG-HERE:index
        if i == self.fail:
            raise ValueError(f"corrupt record in shard for index {i}")
        time.sleep(0.002)
        return torch.tensor([float(i)])


def hanging_index():
    return Shards(hang=7)


def raising_index():
    return {"dataset": Shards(fail=3), "batch_size": 4}


# --- workers crash (as if killed by the OOM killer) -------------------------------------------------------------
class Heavy(Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        if get_worker_info() is not None and i >= 8:
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.tensor([float(i)])


def crashing_workers():
    return Heavy()


def crashing_workers_heard_late():
    """As crashing_workers, with SIGCHLD blocked in the cell's main thread (torch's handler would raise at once): the
    cell learns of its dead worker only when its wait for the batch times out (torch checks its workers every 5 s),
    after a 3 s --item-timeout has looked at it (a CI run on a loaded machine once got there that late)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    return Heavy()


# --- one batch that computes for 5 s inside a worker (the item scan, in the main process, is quick) -----------------
class LongBatch(Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        if get_worker_info() is not None and i == 12:
            total, until = 0, time.monotonic() + 5.0
            while time.monotonic() < until:  # a long computation: its locals advance
                total += 1
        return torch.tensor([float(i)])


def long_batch():
    return LongBatch()


# --- a synthetic dataset with a known per-item cost (for the bench) ----------------------------------------------
class Costly(Dataset):
    def __len__(self):
        return 400

    def __getitem__(self, i):
        time.sleep(0.004)  # I/O-like: overlaps across workers
        return torch.full((64,), float(i))


def costly():
    return Costly()


class Stream(IterableDataset):
    def __iter__(self):
        for i in range(N):
            yield torch.tensor([float(i)])


def stream():
    return Stream()


# --- bad targets -------------------------------------------------------------------------------------------------
def not_a_dataset():
    return 42


class NoLen(Dataset):
    def __len__(self):
        raise TypeError("length unknown until the index is built")

    def __getitem__(self, i):
        return i


def bad_len():
    return NoLen()
