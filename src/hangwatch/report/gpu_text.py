"""The GPU and kernel-log section of an incident, as plain lines every renderer shares."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from hangwatch.records.incident import Incident

if TYPE_CHECKING:
    from hangwatch.records.gpu import GpuDevice


def _series(xs: tuple[float, ...]) -> str:
    if not xs:
        return "?"
    lo, hi = min(xs), max(xs)
    mean = sum(xs) / len(xs)
    return f"{mean:.0f}%" if hi - lo < 1 else f"{mean:.0f}% ({lo:.0f}-{hi:.0f})"


def device_line(d: GpuDevice) -> str:
    """``GPU 0 NVIDIA H100 (0000:06:00.0): util 98% (95-100), mem util 40%, 71.2/80.0 GiB, 67 C, 120/700 W``."""
    parts = [f"util {_series(d.util_percent)}"]
    if d.mem_util_percent:
        parts.append(f"mem util {_series(d.mem_util_percent)}")
    if d.memory_used_mib is not None and d.memory_total_mib:
        parts.append(f"{d.memory_used_mib / 1024:.1f}/{d.memory_total_mib / 1024:.1f} GiB")
    if d.temperature_c is not None:
        parts.append(f"{d.temperature_c:.0f} C")
    if d.power_w is not None:
        parts.append(f"{d.power_w:.0f}" + (f"/{d.power_limit_w:.0f} W" if d.power_limit_w else " W"))
    if d.throttle_reasons:
        parts.append("throttled: " + ", ".join(d.throttle_reasons))
    if d.ecc_uncorrected:
        parts.append(f"{d.ecc_uncorrected} uncorrected ECC errors")
    if d.retired_pages:
        parts.append(f"{d.retired_pages} retired pages")
    if d.persistence_mode is False:
        parts.append("persistence mode off")
    bus = f" ({d.bus_id})" if d.bus_id else ""
    return f"GPU {d.index} {d.name}{bus}: " + ", ".join(parts)


def gpu_lines(incident: Incident) -> list[str]:
    """Every line of the section (empty when the incident has no GPU and no kernel events)."""
    out: list[str] = []
    g = incident.gpu
    if g is not None:
        versions = ", ".join(x for x in (f"driver {g.driver}" if g.driver else "", g.library or "") if x)
        out.append(
            f"GPUs ({g.backend}{', ' + versions if versions else ''}; {g.reads} reads over the window"
            + (", a read did not return" if g.read_stuck else "")
            + "):"
        )
        out.extend("  " + device_line(d) for d in g.devices)
        job = [p for p in g.processes if p.in_job]
        other = [p for p in g.processes if not p.in_job]
        for p in job:
            mem = "?" if p.used_mib is None else f"{p.used_mib:.0f} MiB"
            out.append(f"  job pid {p.pid} holds {mem} on GPU {p.gpu}")
        if other:
            out.append(
                "  other processes on these GPUs: "
                + ", ".join(
                    f"pid {p.pid} ({'?' if p.used_mib is None else f'{p.used_mib:.0f} MiB'} on GPU {p.gpu})"
                    for p in other[:8]
                )
            )
    if incident.kernel:
        out.append("Kernel log since the job started:")
        for e in incident.kernel[-10:]:
            when = time.strftime("%H:%M:%S", time.localtime(e.at)) if e.at else "--:--:--"
            out.append(f"  {when}  {e.text[:200]}")
    return out
