"""GPU-safe restarts: after a job is ended and before the next attempt starts, wait until its
processes hold no GPU memory any more, bounded by --gpu-release-timeout. A context that stays (a
zombie, a worker stuck in the driver) is named with its pids: relaunching into it is a certain OOM."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from hangwatch.records.run import EventKind
from hangwatch.records.values import frozen, mutable

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from hangwatch.capture.gpu_backends import GpuBackend, Reading
    from hangwatch.records.gpu import GpuProcessMemory

POLL_S = 1.0
TOLERANCE_MIB = 512.0  # without per-process figures: device memory back within this of what it was


@frozen
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
        who = ", ".join(
            f"pid {p.pid}"
            + (" (gone: a zombie context)" if p.pid in self.zombies else "")
            + (f" {p.used_mib:.0f} MiB" if p.used_mib is not None else "")
            + f" on GPU {p.gpu}"
            for p in self.held[:8]
        )
        return f"the job's GPU memory is still held after {timeout_s:.0f} s" + (
            f": {who}" if who else f" ({self.how} did not fall back)"
        )


def _alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


def device_used(backend: GpuBackend) -> dict[int, float]:
    """Memory used per device now (MiB): the baseline of a backend with no per-process figures."""
    return {d.index: d.memory_used_mib for d in read(backend).devices if d.memory_used_mib is not None}


def read(backend: GpuBackend) -> Reading:
    """One read, bounded."""
    from hangwatch.capture.gpu import bounded
    from hangwatch.capture.gpu_backends import SMI_TIMEOUT_S

    reading: Reading = bounded(backend.read, SMI_TIMEOUT_S)
    return reading


def wait_release(
    backend: GpuBackend,
    pids: Iterable[int],
    baseline: dict[int, float] | None,
    timeout_s: float,
    now: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Release:
    """Poll until none of ``pids`` holds GPU memory (or, without per-process figures, until each
    device's memory is back within TOLERANCE_MIB of ``baseline``), at most ``timeout_s``."""
    from hangwatch.records.gpu import GpuProcessMemory

    job = set(pids)
    t0 = now()
    held: tuple[GpuProcessMemory, ...] = ()
    while True:
        try:
            reading = read(backend)
        except Exception as e:  # noqa: BLE001 - a failed or stuck read is reported, never a crash of the restart
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


@mutable
class GpuGuard:
    """The run's GPU-safe restarts: the backend and each device's memory before the first launch, then
    before every relaunch the wait for the ended attempt's memory."""

    timeout_s: float
    relaunch_anyway: bool  # --relaunch-on-held-gpu
    event: Callable[..., None]  # RunDir.event
    say: Callable[[str], None]  # a line on stderr
    backend: GpuBackend | None = None  # set at setup() on a machine with GPUs
    baseline: dict[int, float] | None = field(default=None)  # device memory used before the job started

    def setup(self) -> None:
        """At each launch: find the GPUs once (only where device nodes exist: elsewhere this costs one
        glob) and, for a backend without per-process figures, note each device's memory now."""
        from hangwatch.capture.gpu_present import FAKE_ENV, devices_present

        if self.backend is None:
            if FAKE_ENV not in os.environ and not devices_present():
                return
            from hangwatch.capture.gpu import detect

            try:
                self.backend, _ = detect()
            except Exception:  # no GPU backend: restarts go on as on a machine without GPUs
                log.debug("no GPU backend", exc_info=True)
                return
        if self.backend is not None and not self.backend.per_process:
            with contextlib.suppress(Exception):
                self.baseline = device_used(self.backend)

    def released(self, attempt: int, pids: Iterable[int]) -> bool:
        """Wait (bounded) until ``pids`` hold no GPU memory. False when it stays held and the relaunch
        was not asked for anyway: no relaunch into a certain OOM."""
        if self.backend is None:
            return True
        from hangwatch.fixes import GPU_RELEASE_FIX

        rel = wait_release(self.backend, pids, self.baseline, self.timeout_s)
        held: list[dict[str, Any]] = [{"pid": p.pid, "gpu": p.gpu, "used_mib": p.used_mib} for p in rel.held]
        self.event(
            EventKind.GPU_RELEASE,
            attempt=attempt,
            released=rel.released,
            seconds=round(rel.seconds, 2),
            how=rel.how,
            error=rel.error,
            held=held,
            zombies=list(rel.zombies),
        )
        text = rel.text(self.timeout_s)
        if rel.released or rel.error:
            if rel.seconds >= 1 or rel.error:
                self.say(f"hangwatch: {text}.")
            return True
        self.say(
            f"hangwatch: {text}; "
            + (
                "relaunching anyway (--relaunch-on-held-gpu)."
                if self.relaunch_anyway
                else "not relaunching into a certain out-of-memory."
            )
            + f"\n  fix: {GPU_RELEASE_FIX[0]}"
        )
        if not self.relaunch_anyway:
            self.event(EventKind.GIVE_UP, reason="gpu memory held", attempts=attempt)
        return self.relaunch_anyway
