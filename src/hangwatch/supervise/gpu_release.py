"""GPU-safe restarts: after a job is ended and before the next attempt starts, wait until its
processes hold no GPU memory any more, bounded by --gpu-release-timeout. A context that stays (a
zombie, a worker stuck in the driver) is named with its pids: relaunching into it is a certain OOM."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hangwatch.capture.gpu import GpuBackend
from hangwatch.records.gpu import GpuProcessMemory

POLL_S = 1.0
TOLERANCE_MIB = 512.0  # without per-process figures: device memory back within this of what it was


@dataclass(frozen=True)
class Release:
    """How the wait for the job's GPU memory ended."""
    released: bool
    seconds: float
    held: tuple[GpuProcessMemory, ...] = ()  # what the job still held when the wait ended
    zombies: tuple[int, ...] = ()  # pids that hold memory but no longer exist (a context the driver keeps)
    how: str = "per-process"  # per-process | device memory
    error: str | None = None  # the reads failed: nothing could be checked

    def text(self, timeout_s: float) -> str:
        """One line for stderr and the event."""
        if self.error:
            return f"could not check the GPUs' memory ({self.error})"
        if self.released:
            return f"the job's GPU memory was released after {self.seconds:.1f} s"
        who = ", ".join(f"pid {p.pid}" + (" (gone: a zombie context)" if p.pid in self.zombies else "")
                        + (f" {p.used_mib:.0f} MiB" if p.used_mib is not None else "") + f" on GPU {p.gpu}"
                        for p in self.held[:8])
        return (f"the job's GPU memory is still held after {timeout_s:.0f} s"
                + (f": {who}" if who else f" ({self.how} did not fall back)"))


def _alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


def device_used(backend: GpuBackend) -> dict[int, float]:
    """Memory used per device now (MiB): the baseline of a backend with no per-process figures."""
    return {d.index: d.memory_used_mib for d in backend.read().devices if d.memory_used_mib is not None}


def wait_release(backend: GpuBackend, pids: Iterable[int], baseline: dict[int, float] | None, timeout_s: float,
                 now: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> Release:
    """Poll until none of ``pids`` holds GPU memory (or, without per-process figures, until each
    device's memory is back within TOLERANCE_MIB of ``baseline``), at most ``timeout_s``."""
    job = set(pids)
    t0 = now()
    held: tuple[GpuProcessMemory, ...] = ()
    while True:
        try:
            reading = backend.read()
        except Exception as e:  # noqa: BLE001 - a failed read is reported, never a crash of the restart
            return Release(False, now() - t0, error=f"{backend.name}: {e}")
        if backend.per_process:
            held = tuple(GpuProcessMemory(pid, gpu, mib, True) for pid, gpu, mib in reading.processes if pid in job)
            done = not held
            how = "per-process"
        else:
            over = {d.index: (d.memory_used_mib or 0.0) - (baseline or {}).get(d.index, 0.0) for d in reading.devices}
            done = all(x <= TOLERANCE_MIB for x in over.values())
            held = tuple(GpuProcessMemory(0, i, x, True) for i, x in over.items() if x > TOLERANCE_MIB)
            how = "device memory"
        elapsed = now() - t0
        if done:
            return Release(True, elapsed, how=how)
        if elapsed >= timeout_s:
            zombies = tuple(p.pid for p in held if p.pid and not _alive(p.pid))
            return Release(False, elapsed, held, zombies, how)
        sleep(min(POLL_S, max(0.05, timeout_s - elapsed)))
