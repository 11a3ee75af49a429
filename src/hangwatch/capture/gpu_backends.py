"""GPU backends: one small interface (``GpuBackend.read() -> Reading``) at the boundary, and its
implementations. NVML through nvidia-ml-py (``pynvml``, what nvitop uses) or ``nvidia-smi -q -x`` for
NVIDIA; ``rocm-smi --json`` or the amdgpu sysfs counters for AMD; a JSON file of readings
(``$HANGWATCH_GPU_FAKE``) for tests and GPU-less machines. Detection and sampling: ``capture/gpu.py``."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from hangwatch.capture.gpu_present import DRM
from hangwatch.records.gpu import GpuDevice
from hangwatch.records.values import frozen

log = logging.getLogger(__name__)

SMI_TIMEOUT_S = 10.0

MIB = 1024 * 1024

# NVML clocks event (throttle) reason bits, as nvidia-ml-py defines them. GpuIdle is left out: an idle
# GPU is not throttled.
THROTTLE_BITS = {
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
}


@frozen
class Reading:
    """One read of every GPU: devices and the processes holding memory on them."""

    devices: tuple[GpuDevice, ...]  # util_percent / mem_util_percent hold this read's one value
    processes: tuple[tuple[int, int, float | None], ...] = ()  # (pid, device index, MiB)


class GpuBackend(Protocol):
    """The boundary: one read of every GPU."""

    name: str
    driver: str | None
    library: str | None
    per_process: bool  # whether reads list the processes holding memory

    def read(self) -> Reading:
        """Every device and every process holding GPU memory, now. Raises OSError or RuntimeError."""
        ...


class GpuUnavailable(Exception):
    """No GPU backend works here; the message is the note."""


def _f(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v  # NaN is "not known"


def throttle_names(mask: int) -> tuple[str, ...]:
    """The throttle reasons in an NVML clocks-event bit mask."""
    return tuple(name for bit, name in THROTTLE_BITS.items() if mask & bit)


# --- NVML -----------------------------------------------------------------------------------------------
class NvmlBackend:
    """NVIDIA through NVML. ``nvml`` is the pynvml module (or a stand-in with the same functions)."""

    name = "nvml"
    per_process = True

    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        nvml.nvmlInit()
        self.driver = _text(_try(nvml.nvmlSystemGetDriverVersion))
        self.library = _text(_try(nvml.nvmlSystemGetNVMLVersion))
        self.handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]

    def read(self) -> Reading:
        """One NVML read of every device; a field the device does not support is None."""
        n = self.nvml
        devices, procs = [], []
        for i, h in enumerate(self.handles):
            util = _try(n.nvmlDeviceGetUtilizationRates, h)
            mem = _try(n.nvmlDeviceGetMemoryInfo, h)
            pci = _try(n.nvmlDeviceGetPciInfo, h)
            power = _try(n.nvmlDeviceGetPowerUsage, h)
            limit = _try(n.nvmlDeviceGetEnforcedPowerLimit, h)
            reasons = _try(n.nvmlDeviceGetCurrentClocksEventReasons, h)
            if reasons is None:
                reasons = _try(getattr(n, "nvmlDeviceGetCurrentClocksThrottleReasons", None), h)
            ecc_u = _try(n.nvmlDeviceGetTotalEccErrors, h, 1, 0)  # uncorrected, volatile
            ecc_c = _try(n.nvmlDeviceGetTotalEccErrors, h, 0, 0)  # corrected, volatile
            retired = [_try(n.nvmlDeviceGetRetiredPages, h, cause) for cause in (0, 1)]
            persistence = _try(n.nvmlDeviceGetPersistenceMode, h)
            devices.append(
                GpuDevice(
                    index=i,
                    name=_text(_try(n.nvmlDeviceGetName, h)) or f"GPU {i}",
                    vendor="nvidia",
                    bus_id=_text(getattr(pci, "busId", None)),
                    util_percent=() if util is None else (float(util.gpu),),
                    mem_util_percent=() if util is None else (float(util.memory),),
                    memory_used_mib=None if mem is None else mem.used / MIB,
                    memory_total_mib=None if mem is None else mem.total / MIB,
                    temperature_c=_f(_try(n.nvmlDeviceGetTemperature, h, 0)),
                    power_w=None if power is None else power / 1000,
                    power_limit_w=None if limit is None else limit / 1000,
                    throttle_reasons=throttle_names(int(reasons)) if reasons is not None else (),
                    ecc_uncorrected=None if ecc_u is None else int(ecc_u),
                    ecc_corrected=None if ecc_c is None else int(ecc_c),
                    retired_pages=None if all(r is None for r in retired) else sum(len(r or ()) for r in retired),
                    persistence_mode=None if persistence is None else bool(persistence),
                )
            )
            for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
                for p in _try(getattr(n, fn, None), h) or ():
                    used = getattr(p, "usedGpuMemory", None)
                    procs.append((int(p.pid), i, None if used is None else used / MIB))
        return Reading(tuple(devices), tuple(dict.fromkeys(procs)))


def _try(fn: Callable[..., Any] | None, *args: Any) -> Any:
    """The call's value, or None when the device does not support it (NVMLError_NotSupported and kin)."""
    if fn is None:
        return None
    try:
        return fn(*args)
    except Exception:  # NVML raises one error class per status; any of them means "not known"
        log.debug("NVML: %s not known", getattr(fn, "__name__", fn), exc_info=True)
        return None


def _text(x: Any) -> str | None:
    if x is None:
        return None
    return x.decode(errors="replace") if isinstance(x, bytes) else str(x)


# --- nvidia-smi -q -x -----------------------------------------------------------------------------------
Runner = Callable[[list[str]], str]


def run_tool(argv: list[str]) -> str:
    """A GPU tool's stdout; bounded (a lost GPU can make these tools hang)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=SMI_TIMEOUT_S, check=True).stdout
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"{argv[0]} did not answer within {SMI_TIMEOUT_S:.0f} s") from e
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"{argv[0]} failed: {e}") from e


def _num(text: str | None) -> float | None:
    """``45 %``, ``1234 MiB``, ``250.00 W``, ``62 C``: the number; None for N/A."""
    if not text:
        return None
    head = text.strip().split(" ")[0]
    return _f(head)


def parse_nvidia_smi_xml(xml: str) -> tuple[Reading, str | None, str | None]:
    """(reading, driver version, CUDA version) from ``nvidia-smi -q -x``."""
    import xml.etree.ElementTree as ET  # here: only machines with nvidia-smi pay for it

    root = ET.fromstring(xml)  # noqa: S314 - nvidia-smi's own output
    devices, procs = [], []
    for i, gpu in enumerate(root.findall("gpu")):
        devices.append(_smi_device(i, gpu))
        for p in gpu.findall("processes/process_info"):
            pid = _int(_el_text(p, "pid"))
            if pid is not None:
                procs.append((pid, i, _num(_el_text(p, "used_memory"))))
    driver = root.findtext("driver_version")
    cuda = root.findtext("cuda_version")
    return Reading(tuple(devices), tuple(procs)), driver, cuda


def _el_text(g: Any, path: str) -> str | None:
    """The stripped text of the element at ``path`` under ``g`` (None: no such element, or empty)."""
    el = g.find(path)
    return el.text.strip() if el is not None and el.text else None


def _smi_device(i: int, gpu: Any) -> GpuDevice:
    """One ``<gpu>`` of ``nvidia-smi -q -x``: the fields read from whichever element this driver version has."""

    def t(path: str) -> str | None:
        return _el_text(gpu, path)

    reasons = gpu.find("clocks_event_reasons")
    if reasons is None:
        reasons = gpu.find("clocks_throttle_reasons")
    active = tuple(
        sorted(
            _SMI_REASONS[el.tag]
            for el in (reasons if reasons is not None else ())
            if el.tag in _SMI_REASONS and (el.text or "").strip() == "Active"
        )
    )
    power = (
        t("gpu_power_readings/instant_power_draw")
        or t("gpu_power_readings/power_draw")
        or t("gpu_power_readings/average_power_draw")
        or t("power_readings/power_draw")
    )
    limit = (
        t("gpu_power_readings/current_power_limit")
        or t("power_readings/power_limit")
        or t("power_readings/enforced_power_limit")
    )
    retired = [
        t(f"retired_pages/{k}/retired_count") for k in ("multiple_single_bit_retirement", "double_bit_retirement")
    ]
    persistence = t("persistence_mode")
    return GpuDevice(
        index=i,
        name=t("product_name") or f"GPU {i}",
        vendor="nvidia",
        bus_id=gpu.get("id"),
        util_percent=tuple(x for x in (_num(t("utilization/gpu_util")),) if x is not None),
        mem_util_percent=tuple(x for x in (_num(t("utilization/memory_util")),) if x is not None),
        memory_used_mib=_num(t("fb_memory_usage/used")),
        memory_total_mib=_num(t("fb_memory_usage/total")),
        temperature_c=_num(t("temperature/gpu_temp")),
        power_w=_num(power),
        power_limit_w=_num(limit),
        throttle_reasons=active,
        ecc_uncorrected=_int(t("ecc_errors/volatile/dram_uncorrectable") or t("ecc_errors/volatile/double_bit/total")),
        ecc_corrected=_int(t("ecc_errors/volatile/dram_correctable") or t("ecc_errors/volatile/single_bit/total")),
        retired_pages=None if all(r is None for r in retired) else sum(_int(r) or 0 for r in retired),
        persistence_mode=None if persistence is None else persistence == "Enabled",
    )


_SMI_REASONS = {
    "applications_clocks_setting": "applications_clocks_setting",
    "sw_power_cap": "sw_power_cap",
    "hw_slowdown": "hw_slowdown",
    "hw_thermal_slowdown": "hw_thermal_slowdown",
    "hw_power_brake_slowdown": "hw_power_brake_slowdown",
    "sync_boost": "sync_boost",
    "sw_thermal_slowdown": "sw_thermal_slowdown",
    "clocks_event_reason_applications_clocks_setting": "applications_clocks_setting",
    "clocks_event_reason_sw_power_cap": "sw_power_cap",
    "clocks_event_reason_hw_slowdown": "hw_slowdown",
    "clocks_event_reason_hw_thermal_slowdown": "hw_thermal_slowdown",
    "clocks_event_reason_hw_power_brake_slowdown": "hw_power_brake_slowdown",
    "clocks_event_reason_sync_boost": "sync_boost",
    "clocks_event_reason_sw_thermal_slowdown": "sw_thermal_slowdown",
}


def _int(text: str | None) -> int | None:
    v = _num(text)
    return None if v is None else int(v)


class NvidiaSmiBackend:
    """NVIDIA through ``nvidia-smi -q -x`` (when nvidia-ml-py is not installed)."""

    name = "nvidia-smi"
    per_process = True

    def __init__(self, run: Runner = run_tool) -> None:
        self.run = run
        _, self.driver, cuda = parse_nvidia_smi_xml(run(["nvidia-smi", "-q", "-x"]))
        self.library = f"CUDA {cuda}" if cuda else None

    def read(self) -> Reading:
        """One ``nvidia-smi -q -x``."""
        return parse_nvidia_smi_xml(self.run(["nvidia-smi", "-q", "-x"]))[0]


# --- AMD: rocm-smi --json, sysfs ------------------------------------------------------------------------
ROCM_ARGS = [
    "rocm-smi",
    "--showuse",
    "--showmemuse",
    "--showmeminfo",
    "vram",
    "--showtemp",
    "--showpower",
    "--showproductname",
    "--showbus",
    "--json",
]


def _pick(card: dict[str, Any], *needles: str) -> str | None:
    """The value of the first key containing every needle (rocm-smi's keys change between releases)."""
    for k, v in card.items():
        low = k.lower()
        if all(n in low for n in needles):
            return str(v)
    return None


def parse_rocm_smi(text: str, pids_text: str | None = None) -> tuple[Reading, str | None]:
    """(reading, driver version) from ``rocm-smi ... --json`` (and ``rocm-smi --showpids --json``)."""
    data = json.loads(text)
    devices = []
    cards = sorted(
        (k for k in data if k.startswith("card")), key=lambda k: int("".join(c for c in k if c.isdigit()) or 0)
    )
    for i, key in enumerate(cards):
        c = data[key]
        used, total = _f(_pick(c, "vram total used")), _f(_pick(c, "vram total memory"))
        util = _f(_pick(c, "gpu use"))
        mem_util = _f(_pick(c, "memory allocated")) or _f(_pick(c, "memory activity"))
        devices.append(
            GpuDevice(
                index=i,
                name=_pick(c, "card series") or _pick(c, "device name") or _pick(c, "card model") or key,
                vendor="amd",
                bus_id=_pick(c, "pci bus"),
                util_percent=() if util is None else (util,),
                mem_util_percent=() if mem_util is None else (mem_util,),
                memory_used_mib=None if used is None else used / MIB,
                memory_total_mib=None if total is None else total / MIB,
                temperature_c=_f(_pick(c, "temperature", "edge")) or _f(_pick(c, "temperature", "junction")),
                power_w=_f(_pick(c, "average graphics package power"))
                or _f(_pick(c, "current socket graphics package")),
                power_limit_w=_f(_pick(c, "max graphics package power")),
            )
        )
    procs: list[tuple[int, int, float | None]] = []
    if pids_text:
        for k, v in json.loads(pids_text).get("system", {}).items():
            if not k.startswith("PID"):
                continue
            parts = [x.strip() for x in str(v).split(",")]  # name, GPUs, VRAM used (bytes), SDMA, CU occupancy
            vram = _f(parts[2]) if len(parts) > 2 else None
            # The second field is how many GPUs the process uses, not which: the device stays unknown (-1).
            procs.append((int(k[3:]), -1, None if vram is None else vram / MIB))
    driver = None
    sys_info = data.get("system", {})
    if isinstance(sys_info, dict):
        driver = _pick(sys_info, "driver version")
    return Reading(tuple(devices), tuple(procs)), driver


class RocmSmiBackend:
    """AMD through ``rocm-smi --json``."""

    name = "rocm-smi"
    per_process = True
    library: str | None = None

    def __init__(self, run: Runner = run_tool) -> None:
        self.run = run
        _, self.driver = parse_rocm_smi(run(["rocm-smi", "--showdriverversion", "--json"]))

    def read(self) -> Reading:
        """One rocm-smi read, with the processes holding VRAM."""
        try:
            pids = self.run(["rocm-smi", "--showpids", "--json"])
        except RuntimeError:
            pids = None
        return parse_rocm_smi(self.run(ROCM_ARGS), pids)[0]


class AmdSysfsBackend:
    """AMD through the amdgpu sysfs counters: busy percent and VRAM; no per-process memory."""

    name = "sysfs"
    per_process = False
    library: str | None = None
    driver: str | None

    def __init__(self, drm: Path = DRM) -> None:
        self.cards = sorted(p.parent for p in drm.glob("card[0-9]*/device/gpu_busy_percent"))
        if not self.cards:
            raise GpuUnavailable("no amdgpu device in /sys/class/drm")
        self.driver = _read(Path("/sys/module/amdgpu/version"))

    def read(self) -> Reading:
        """One read of every card's counters."""
        out = []
        for i, dev in enumerate(self.cards):
            busy, used, total = (
                _f(_read(dev / n)) for n in ("gpu_busy_percent", "mem_info_vram_used", "mem_info_vram_total")
            )
            mem_busy = _f(_read(dev / "mem_busy_percent"))
            out.append(
                GpuDevice(
                    index=i,
                    name=dev.parent.name,
                    vendor="amd",
                    bus_id=Path(os.path.realpath(dev)).name,
                    util_percent=() if busy is None else (busy,),
                    mem_util_percent=() if mem_busy is None else (mem_busy,),
                    memory_used_mib=None if used is None else used / MIB,
                    memory_total_mib=None if total is None else total / MIB,
                )
            )
        return Reading(tuple(out))


def _read(p: Path) -> str | None:
    try:
        return p.read_text().strip()
    except OSError:
        return None


# --- a fake, for tests and GPU-less machines -----------------------------------------------------------
class FakeBackend:
    """Readings from a JSON file, read again on every read (a test changes it while a job runs):
    ``{"driver": "...", "library": "...", "devices": [GpuDevice fields...], "processes": [{"pid": 1,
    "gpu": 0, "used_mib": 900, "release_after_exit_s": 3}]}``. A process entry holds memory while
    the pid lives, and ``release_after_exit_s`` longer (a context the driver frees late; -1: never)."""

    name = "fake"
    per_process = True

    def __init__(self, path: Path) -> None:
        self.path = path
        data = self._load()
        self.driver, self.library = data.get("driver"), data.get("library")
        self._dead_since: dict[int, float] = {}

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as e:
            raise RuntimeError(f"cannot read the fake GPU file {self.path}: {e}") from e
        if not isinstance(data, dict):
            raise RuntimeError(f"the fake GPU file {self.path} is not a JSON object")
        return data

    def read(self) -> Reading:
        """The devices as written; processes by the rules above."""
        data = self._load()
        devices = tuple(
            GpuDevice(
                **{
                    **d,
                    "util_percent": tuple(d.get("util_percent", ())),
                    "mem_util_percent": tuple(d.get("mem_util_percent", ())),
                    "throttle_reasons": tuple(d.get("throttle_reasons", ())),
                }
            )
            for d in data.get("devices", ())
        )
        now = time.monotonic()
        procs = []
        for p in data.get("processes", ()):
            pid = int(p["pid"])
            if not Path(f"/proc/{pid}").exists() or _zombie(pid):
                since = self._dead_since.setdefault(pid, now)
                linger = float(p.get("release_after_exit_s", 0))
                if linger >= 0 and now - since >= linger:
                    continue
            procs.append((pid, int(p.get("gpu", 0)), _f(p.get("used_mib"))))
        return Reading(devices, tuple(procs))


def _zombie(pid: int) -> bool:
    st = _read(Path(f"/proc/{pid}/stat"))
    return st is not None and st[st.rfind(")") + 2 : st.rfind(")") + 3] == "Z"
