"""DataLoader workers that died, recorded as the main process sees their error: heartbeat/worker-deaths.jsonl, a
line each time a DataLoader iterator raised with a worker of it dead (its exit code). The job's own traceback may not
say it: a SIGKILLed worker can cut a batch's hand-over (ConnectionResetError), and torch's SIGCHLD handler raising
while that traceback is written loses it ("lost sys.stderr", seen under load). A crash is then named from this line.

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import collections
import json
import os
import time
from collections.abc import Callable
from typing import Any

# The workers of the last few iterators, for an error raised outside their __next__ (torch's SIGCHLD handler raises
# wherever the main thread is, a print in the loop's body say): the job's unhandled error records their dead workers
# first. The iterator itself is freed as the error unwinds the loop's frame, before the hook runs: its workers are
# kept here (their exit codes outlive the iterator's shutdown, which joins them).
_RECENT_WORKERS: collections.deque[list[Any]] = collections.deque(maxlen=4)


def _excepthook(directory: str, previous: Callable[..., Any]) -> Callable[..., Any]:
    def hook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        try:
            for workers in list(_RECENT_WORKERS):
                _note_dead_workers(directory, workers, error, unhandled=True)
        finally:
            previous(kind, error, tb)

    return hook


# A worker's hand-over is cut as its files close, a moment before it can be reaped: for those errors its exit code is
# waited for a little (the job is failing anyway), never for others.
CUT_HANDOVER: tuple[type[BaseException], ...] = (
    ConnectionResetError,
    ConnectionRefusedError,
    BrokenPipeError,
    EOFError,
)
DEATH_WAIT_S = 0.5


def _note_dead_workers(directory: str, workers: list[Any], error: BaseException, unhandled: bool = False) -> None:
    try:
        if not workers:
            return
        deadline = time.monotonic() + (DEATH_WAIT_S if isinstance(error, CUT_HANDOVER) else 0.0)
        while True:
            dead = [(w.pid, w.exitcode) for w in workers if w.exitcode not in (None, 0)]
            if dead or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        if not dead:
            return
        record = {"pid": os.getpid(), "workers": dead, "error": type(error).__name__, "at": time.time()}
        line = json.dumps({**record, "unhandled": unhandled})  # unhandled: the error the process dies of
        fd = os.open(os.path.join(directory, "worker-deaths.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode() + b"\n")
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001, S110 - a record must never change the job's own error
        pass
