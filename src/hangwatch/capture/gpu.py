"""GPU facts in a capture: which backend this machine has (detected once, bounded), and the reads
taken over the capture window (utilization, memory, temperature, power, throttling, ECC, and which
processes hold GPU memory). Optional at install and at run time: no GPU, no driver or no library is a
note, never an error. The backends themselves: ``capture/gpu_backends.py``."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from hangwatch.capture.gpu_backends import (
    SMI_TIMEOUT_S,
    AmdSysfsBackend,
    FakeBackend,
    GpuBackend,
    GpuUnavailable,
    NvidiaSmiBackend,
    NvmlBackend,
    Reading,
    RocmSmiBackend,
)
from hangwatch.capture.gpu_present import FAKE_ENV, devices_present
from hangwatch.records.gpu import GpuEvidence, GpuProcessMemory
from hangwatch.records.values import mutable

READ_EVERY_S = 0.5  # NVML's utilization is itself an average over the last 1/6 to 1 s


# --- detection and sampling -----------------------------------------------------------------------------
def bounded(fn: Callable[[], Any], timeout_s: float) -> Any:
    """``fn()`` in a daemon thread, abandoned after ``timeout_s`` (TimeoutError): calls into a driver
    whose GPU is lost can block forever, and the caller must not."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=work, name="hangwatch-gpu-call", daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        raise TimeoutError(f"no answer within {timeout_s:.0f} s (a lost GPU or a hung driver)")
    if "error" in box:
        raise box["error"]
    return box["value"]


_cache: dict[str, tuple[GpuBackend | None, str | None]] = {}  # detected once per process
_cache_lock = threading.Lock()


def detect(env: dict[str, str] | None = None, use_cache: bool = True) -> tuple[GpuBackend | None, str | None]:
    """The backend for this machine, or (None, a note saying why there is none)."""
    env = dict(os.environ) if env is None else env
    if FAKE_ENV in env or not use_cache:
        return _detect(env)
    with _cache_lock:
        if "machine" not in _cache:
            _cache["machine"] = _detect(env)
        return _cache["machine"]


def _detect(env: dict[str, str]) -> tuple[GpuBackend | None, str | None]:
    fake = env.get(FAKE_ENV)
    if fake:
        try:
            return FakeBackend(Path(fake)), None
        except RuntimeError as e:
            return None, str(e)
    if not devices_present():
        return None, None  # no GPU here: nothing to say
    notes = []
    try:
        import pynvml  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        pynvml = None
    # Each backend is tried with a bound (nvmlInit on a lost GPU can block) and any error is a note:
    # garbled tool output must never break a capture.
    candidates: list[tuple[str, Callable[[], GpuBackend]]] = []
    if pynvml is not None:
        candidates.append(("NVML", lambda: NvmlBackend(pynvml)))
    if shutil.which("nvidia-smi"):
        candidates.append(("nvidia-smi", NvidiaSmiBackend))
    if shutil.which("rocm-smi"):
        candidates.append(("rocm-smi", RocmSmiBackend))
    for label, make in candidates:
        try:
            return bounded(make, SMI_TIMEOUT_S), None
        except Exception as e:  # noqa: BLE001 - NVMLError_*, a timeout, a parse error: try the next one
            notes.append(f"{label}: {e}")
    try:
        return AmdSysfsBackend(), None
    except GpuUnavailable:
        pass
    if not notes:
        notes.append("no nvidia-ml-py (pip install 'hangwatch[gpu]'), nvidia-smi or rocm-smi")
    return None, "GPU devices are present but none could be read (" + "; ".join(notes) + ")"


@mutable
class GpuSampler:
    """Reads the GPUs every READ_EVERY_S in a thread while the stacks are sampled; each read is
    bounded, because calls into a driver whose GPU is lost can block forever."""

    backend: GpuBackend
    every_s: float = READ_EVERY_S
    readings: list[Reading] = field(default_factory=list)
    error: str | None = None
    stuck: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> GpuSampler:
        """Begin reading."""
        self._thread = threading.Thread(target=self._loop, name="hangwatch-gpu", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while True:
            try:
                self.readings.append(self.backend.read())
            except Exception as e:  # noqa: BLE001 - a failed read is a note, never a failed capture
                self.error = f"{self.backend.name}: {e}"
            if self._stop.wait(self.every_s):
                return

    def stop(self, timeout_s: float = SMI_TIMEOUT_S) -> None:
        """Stop; a read that does not return within ``timeout_s`` is abandoned and noted."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self.stuck = self._thread.is_alive()

    def evidence(self, job_pids: Iterable[int]) -> tuple[GpuEvidence | None, list[str]]:
        """The window's readings as evidence: per device the series of utilization, the newest other
        values; the processes holding memory, the job's marked."""
        notes = []
        if self.stuck:
            notes.append(
                f"a GPU read ({self.backend.name}) did not return within {SMI_TIMEOUT_S:.0f} s: a lost GPU "
                "or a hung driver blocks such calls"
            )
        if self.error:
            notes.append(f"GPU read failed: {self.error}")
        if not self.readings:
            return None, notes
        return merge_readings(self.backend, self.readings, set(job_pids), self.stuck), notes


def merge_readings(backend: GpuBackend, readings: list[Reading], job: set[int], stuck: bool = False) -> GpuEvidence:
    """Several reads into one GpuEvidence."""
    last = readings[-1]
    devices = []
    for d in last.devices:
        same = [x for r in readings for x in r.devices if x.index == d.index]
        devices.append(
            replace(
                d,
                util_percent=tuple(v for x in same for v in x.util_percent),
                mem_util_percent=tuple(v for x in same for v in x.mem_util_percent),
            )
        )
    procs = {(pid, gpu): mib for pid, gpu, mib in last.processes}
    return GpuEvidence(
        backend=backend.name,
        driver=backend.driver,
        library=backend.library,
        devices=tuple(devices),
        processes=tuple(
            GpuProcessMemory(pid, gpu, None if mib is None else round(mib, 1), pid in job)
            for (pid, gpu), mib in sorted(procs.items())
        ),
        reads=len(readings),
        read_stuck=stuck,
    )
