"""What the GPUs and the kernel said during a capture: shared by the evidence (capture) and the
incident (what renderers read), so neither imports the other."""

from __future__ import annotations

from typing import Any

from hangwatch.records.values import frozen


@frozen
class GpuDevice:
    """One GPU over the capture window (None: the backend could not say)."""

    index: int  # the device's index
    name: str  # its model
    vendor: str  # nvidia | amd
    bus_id: str | None = None  # its PCI address
    util_percent: tuple[float, ...] = ()  # one value per read over the window
    mem_util_percent: tuple[float, ...] = ()  # memory bandwidth used, one value per read
    memory_used_mib: float | None = None  # memory in use, MiB
    memory_total_mib: float | None = None  # its memory, MiB
    temperature_c: float | None = None  # degrees Celsius
    power_w: float | None = None  # power drawn, watts
    power_limit_w: float | None = None  # its power limit, watts
    throttle_reasons: tuple[str, ...] = ()  # e.g. hw_thermal_slowdown, sw_power_cap (idle is left out)
    ecc_uncorrected: int | None = None  # volatile (since the driver loaded)
    ecc_corrected: int | None = None  # corrected ECC errors (volatile)
    retired_pages: int | None = None  # memory pages retired
    persistence_mode: bool | None = None  # the driver's persistence mode


@frozen
class GpuProcessMemory:
    """A process holding memory on a GPU."""

    pid: int  # the process
    gpu: int  # the device index
    used_mib: float | None  # the memory it holds, MiB
    in_job: bool  # a process of the captured job (else: someone else's)


@frozen
class GpuEvidence:
    """What the GPUs did during the capture: devices, and who holds their memory."""

    backend: str  # nvml | nvidia-smi | rocm-smi | sysfs | fake
    driver: str | None  # the driver's version
    library: str | None  # NVML or ROCm SMI version
    devices: tuple[GpuDevice, ...]  # each GPU
    processes: tuple[GpuProcessMemory, ...] = ()  # who held GPU memory
    reads: int = 0  # reads taken over the window
    read_stuck: bool = False  # a read did not return in time (a lost GPU hangs the driver calls)


@frozen
class KernelEvent:
    """A line of the kernel log that matters for a hang: a GPU fault, an OOM kill, a hung task, NFS."""

    at: float | None  # unix time (None: the source had no time)
    kind: str  # xid | sxid | fell_off_bus | amdgpu_hog | amdgpu_fault | oom_kill | hung_task | nfs_down | nfs_ok
    text: str  # the kernel log's line
    code: int | None = None  # the Xid
    pid: int | None = None  # the process it names
    name: str | None = None  # that process's name, or the NFS server
    device: str | None = None  # the PCI address


def gpu_from_dict(g: dict[str, Any]) -> GpuEvidence:
    """GpuEvidence from its JSON object."""
    devices = tuple(
        GpuDevice(
            **{
                **x,
                "util_percent": tuple(x.get("util_percent", ())),
                "mem_util_percent": tuple(x.get("mem_util_percent", ())),
                "throttle_reasons": tuple(x.get("throttle_reasons", ())),
            }
        )
        for x in g.get("devices", ())
    )
    return GpuEvidence(
        **{**g, "devices": devices, "processes": tuple(GpuProcessMemory(**p) for p in g.get("processes", ()))}
    )
