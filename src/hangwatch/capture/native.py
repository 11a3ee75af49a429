"""The native pass: one py-spy ``--native`` read of the processes whose Python stack explains
nothing (a forked process asleep in a futex at 0 % CPU, in or under a C call), or of every Python
process when asked (``--native``). Once per capture, bounded in time; C/C++ frames name what a
Python stack cannot: OpenMP, MKL, tokenizers, CUDA or NCCL state inherited across fork."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.capture.stacks import dump_stacks
from hangwatch.records.evidence import NativeStack, ProcessInfo, ProcessSample, Role

TIMEOUT_S = 6.0
IDLE_SHARE = 0.05  # of one core: asleep


def explains_nothing(info: ProcessInfo, samples: list[ProcessSample], clock_ticks: int) -> bool:
    """A forked process whose main thread sleeps in a futex at ~0 % CPU in every sample, with no
    Python stack or one whose innermost frame is the user's own line (the wait is inside a C call)."""
    if not info.is_python or len(samples) < 2:
        return False
    if not (info.forked_from_parent or info.role == Role.DATALOADER_WORKER):
        return False
    seconds = samples[-1].at - samples[0].at
    for s in samples:
        t = next((x for x in s.threads if x.tid == info.pid), None)
        if t is None or t.state != "S" or not (t.wchan or "").startswith("futex"):
            return False
        if t.frames and not sg.is_user(t.frames[0]):
            return False  # a Python-level wait (queue, lock, sleep): the Python stack explains it
    first = next((x for x in samples[0].threads if x.tid == info.pid), None)
    last = next((x for x in samples[-1].threads if x.tid == info.pid), None)
    if first is None or last is None or first.cpu_ticks is None or last.cpu_ticks is None or seconds <= 0:
        return False
    return (last.cpu_ticks - first.cpu_ticks) / clock_ticks <= IDLE_SHARE * seconds


def read_native(pids: list[int], py_spy: str) -> tuple[dict[int, tuple[NativeStack, ...]], list[str]]:
    """One native read of each pid: pid -> its threads' mixed stacks, and notes on failures."""
    results = dump_stacks(dict.fromkeys(pids, False), py_spy, TIMEOUT_S, native=True)
    out: dict[int, tuple[NativeStack, ...]] = {}
    notes: list[str] = []
    for pid, r in results.items():
        if r.threads is None:
            notes.append(f"no native stack of pid {pid}: {r.error}")
            continue
        out[pid] = tuple(NativeStack(t.tid, t.frames) for t in r.threads)
    return out, notes
