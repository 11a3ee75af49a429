"""GPU and kernel causes: faults in the kernel log (Xid, amdgpu), OOM kills, NFS servers gone, and what
the GPUs did over the window (a GPU at 100% with no progress, or every GPU idle while the job is stuck)."""

from __future__ import annotations

import re
import time
from dataclasses import replace

from hangwatch import fixes
from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose.ends import End
from hangwatch.diagnose.scene import Hit, Scene, named
from hangwatch.diagnose.views import ProcessView, innermost_explaining
from hangwatch.records.evidence import Role
from hangwatch.records.gpu import GpuDevice, GpuEvidence, KernelEvent
from hangwatch.records.incident import Finding, Verdict, Where

BUSY_PERCENT = 90.0  # mean utilization above which a GPU counts as busy for the whole window
SILENT_POWER_RATIO = 0.3  # busy at under this share of its power limit: spinning, not computing
MIN_READS = 3  # GPU activity decides nothing from fewer reads
HARDWARE_XIDS = frozenset({48, 61, 62, 64, 74, 79, 94, 95, 119, 120})
# Logged, but not a failure of the work: a page retired or a row remapped, a high single-bit rate, the
# cleanup after a process ends (hangwatch's own kill of an attempt causes one), non-fatal NVLink errors.
INFO_XIDS = frozenset({45, 63, 92})
FATAL_WITHOUT_OWNER = frozenset({79, 48, 95, 119, 120})  # a dead GPU: the job on it cannot go on, whoever it names
BUS = re.compile(r"([0-9a-f]{2,4}):([0-9a-f]{2})(?:[.:]\d)?$")


def _clock(at: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at)) if at else "(no time)"


def _main(scene: Scene) -> ProcessView | None:
    first = scene.views[0] if scene.views else None
    return next((v for r in (Role.MAIN, Role.RANK, Role.CHILD) for v in scene.views if v.role == r), first)


def _where(scene: Scene, pid: int | None) -> Where | None:
    """Where the process the kernel names is (else the main process): its main thread's own line."""
    v = (scene.view(pid) if pid is not None else None) or _main(scene)
    if v is None:
        return None
    t = v.main_thread
    frame = innermost_explaining(t.frames) if t is not None else None
    return v.where(t if frame is not None else None, frame)


def _job_pids(scene: Scene) -> set[int]:
    """Every pid of the job: captured now, or seen by the supervisor (kernel lines name dead victims)."""
    return {v.pid for v in scene.views} | set(scene.evidence.known_pids)


def _bus(text: str | None) -> str | None:
    """``2b:00`` from ``PCI:0000:2b:00`` (a kernel line) or ``00000000:2B:00.0`` (NVML, nvidia-smi)."""
    if not text:
        return None
    m = BUS.search(text.strip().lower())
    return f"{m.group(1)[-2:]}:{m.group(2)}" if m else None


def informational(e: KernelEvent) -> bool:
    """A line that records something without the work failing."""
    return (e.kind == "xid" and e.code in INFO_XIDS) or "nonfatal" in e.text.lower().replace("-", "")


def attributable(scene: Scene, e: KernelEvent) -> bool:
    """Whether a kernel line is about this job: it names one of its pids, or a GPU it holds memory on,
    or (a dead GPU, naming no process) the job's GPUs are not known. Other lines are evidence only:
    another user's fault must never get this job killed."""
    if e.pid is not None:
        return e.pid in _job_pids(scene)
    gpu = scene.evidence.gpu
    ours = {_bus(d.bus_id) for d in job_devices(gpu)} if gpu else set()
    if e.device is not None and ours - {None}:
        return _bus(e.device) in ours
    fatal = e.kind in ("fell_off_bus", "amdgpu_fault") or (e.kind == "xid" and e.code in FATAL_WITHOUT_OWNER)
    return fatal


def _fault(scene: Scene, e: KernelEvent) -> Hit:
    """gpu.fault from one kernel line."""
    who = f" (pid {e.pid}{', ' + e.name if e.name else ''})" if e.pid else ""
    dev = f" on {e.device}" if e.device else ""
    fix: tuple[str, ...]
    if e.kind == "xid" and e.code is not None:
        meaning = sg.XID_MEANINGS.get(e.code, "an NVIDIA driver error")
        summary = f"The kernel log has NVIDIA Xid {e.code}{dev}{who} at {_clock(e.at)}: {meaning}."
        hardware = e.code in HARDWARE_XIDS
        fix = fixes.GPU_HARDWARE_FIX if hardware or e.code not in sg.XID_APP_FAULTS else fixes.GPU_APP_FAULT_FIX
        ours = e.pid is not None and scene.view(e.pid) is not None  # the fault names a process of this job
        confidence = 0.97 if e.code == 79 else 0.93 if hardware or ours else 0.88
    elif e.kind == "sxid":
        summary = f"The kernel log has an NVSwitch SXid {e.code}{dev} at {_clock(e.at)}: the GPU fabric failed."
        fix, confidence = fixes.GPU_HARDWARE_FIX, 0.85
    elif e.kind == "fell_off_bus":
        summary = f"The kernel log says the GPU{dev} has fallen off the bus at {_clock(e.at)}: it no longer answers."
        fix, confidence = fixes.GPU_HARDWARE_FIX, 0.97
    else:  # amdgpu_fault
        summary = f"The amdgpu driver reported a fault at {_clock(e.at)}: {e.text[:160]}"
        fix, confidence = fixes.AMDGPU_FIX, 0.9
    return _kernel_hit(scene, Cause.GPU_FAULT, confidence, summary, e.pid, [f"kernel log: {e.text[:300]}"], fix)


def _kernel_hit(
    scene: Scene,
    cause: Cause,
    sure: float,
    said: str,
    pid: int | None,
    ev: list[str],
    fix: tuple[str, ...],
    end: str = "failed",
) -> Hit:
    """A finding read from the kernel log, at ``pid`` (else the job's main process), whose waiters wait for what
    failed or was killed (``End``)."""
    return named(Finding(cause, sure, said, _where(scene, pid), tuple(ev), fix), End(end))


def kernel_rule(scene: Scene) -> list[Hit]:
    """gpu.fault (Xid, SXid, fallen off the bus, amdgpu faults and hogged-CPU warnings), memory.oom
    (the OOM killer's victim), io.storage_wait (an NFS server not responding, a hung task of the job)."""
    events = tuple(e for e in scene.evidence.kernel if not informational(e))
    hits: list[Hit] = []
    faults = [e for e in events if e.kind in ("xid", "sxid", "fell_off_bus", "amdgpu_fault") and attributable(scene, e)]
    if faults:
        # The most severe, then the newest: Xid 79 says more than the Xid 45 cleanup after it.
        worst = max(faults, key=lambda e: (_fault(scene, e).finding.confidence, e.at or 0.0))
        hit = _fault(scene, worst)
        more = [f"kernel log: {e.text[:200]}" for e in faults if e is not worst][-4:]
        hits.append(replace(hit, finding=replace(hit.finding, evidence=hit.finding.evidence + tuple(more))))
    hogs = [e for e in events if e.kind == "amdgpu_hog"]
    if hogs and not faults:
        said = (
            f"The amdgpu driver's work ({hogs[-1].name}) hogged a CPU {len(hogs)} time(s) since the job started: the "
            "ROCm driver is struggling, and forked DataLoader workers are known to hang with it."
        )
        ev = [f"kernel log: {h.text[:200]}" for h in hogs[-3:]]
        hits.append(_kernel_hit(scene, Cause.GPU_FAULT, 0.6, said, None, ev, fixes.AMDGPU_FIX))
    hits.extend(_oom(scene, [e for e in events if e.kind == "oom_kill"]))
    hits.extend(_storage(scene, events))
    return hits


def _oom(scene: Scene, kills: list[KernelEvent]) -> list[Hit]:
    """memory.oom when the victim was a process of this job (others' kills are evidence only)."""
    pids = _job_pids(scene)
    ours = [e for e in kills if e.pid in pids]
    if not ours:
        return []
    e = ours[-1]
    summary = (
        f"The kernel's out-of-memory killer killed pid {e.pid} ({e.name}) of the job at {_clock(e.at)}: a "
        "DataLoader worker or a rank gone this way leaves the rest waiting."
    )
    ev = [f"kernel log: {k.text[:250]}" for k in ours[-3:]]
    return [_kernel_hit(scene, Cause.MEMORY_OOM, 0.9, summary, None, ev, fixes.OOM_FIX, "killed")]


def _storage(scene: Scene, events: tuple[KernelEvent, ...]) -> list[Hit]:
    hits = []
    down: dict[str, KernelEvent] = {}
    for e in events:
        if e.kind == "nfs_down" and e.name:
            down[e.name] = e
        elif e.kind == "nfs_ok" and e.name:
            down.pop(e.name, None)
    d_state = [v for v in scene.views if v.state == "D" or any(t.last.state == "D" for t in v.threads)]
    for server, e in down.items() if d_state else ():  # no process waiting in the kernel: evidence only
        summary = (
            f"The NFS server {server} stopped answering at {_clock(e.at)} and has not come back; "
            f"{len(d_state)} process(es) of the job wait on it in the kernel (state D)."
        )
        ev = [f"kernel log: {e.text[:250]}"] + [f"{v.label()} in state D" for v in d_state[:4]]
        fix = fixes.NFS_FIX + fixes.STORAGE_FIX[:1]
        hits.append(_kernel_hit(scene, Cause.IO_STORAGE_WAIT, 0.88, summary, d_state[0].pid, ev, fix))
    pids = _job_pids(scene)
    hung = next((e for e in events if e.kind == "hung_task" and e.pid in pids), None)
    if hung is not None:
        said = (
            f"The kernel reports pid {hung.pid} ({hung.name}) of the job blocked in an uninterruptible wait at "
            f"{_clock(hung.at)} (a storage or driver call that does not return)."
        )
        ev = [f"kernel log: {hung.text[:250]}"]
        hits.append(_kernel_hit(scene, Cause.IO_STORAGE_WAIT, 0.75, said, hung.pid, ev, fixes.STORAGE_FIX))
    return hits


def job_devices(gpu: GpuEvidence) -> list[GpuDevice]:
    """The GPUs the job holds memory on (none when that is not known: another tenant's GPU says
    nothing about this job)."""
    used = {p.gpu for p in gpu.processes if p.in_job}
    return [d for d in gpu.devices if d.index in used]


def _mean(xs: tuple[float, ...]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def gpus_idle(gpu: GpuEvidence) -> bool:
    """Every GPU at 0% on every read of the window."""
    return bool(gpu.devices) and all(d.util_percent and max(d.util_percent) == 0 for d in gpu.devices)


def busy_devices(gpu: GpuEvidence) -> list[GpuDevice]:
    """The job's GPUs busy on every read of the window (at least MIN_READS of them)."""
    return [
        d
        for d in job_devices(gpu)
        if len(d.util_percent) >= MIN_READS
        and (m := _mean(d.util_percent)) is not None
        and m >= BUSY_PERCENT
        and min(d.util_percent) >= BUSY_PERCENT / 2
    ]


def _in_collective(scene: Scene) -> bool:
    return any(
        t.has_stack and any(sg.at(f, sg.C10D_PY, sg.COLLECTIVES) for f in t.frames)
        for v in scene.views
        for t in v.threads
    )


def _power_text(d: GpuDevice) -> str:
    """A device's power draw in words: of its limit where known."""
    if d.power_w is None:
        return "power unknown"
    return f"{d.power_w:.0f} W of {d.power_limit_w:.0f} W" if d.power_limit_w else f"{d.power_w:.0f} W"


def _at_idle_power(d: GpuDevice) -> bool:
    """Whether a device draws under SILENT_POWER_RATIO of its limit (both read)."""
    return d.power_w is not None and bool(d.power_limit_w) and d.power_w < SILENT_POWER_RATIO * (d.power_limit_w or 0)


def gpu_activity_rule(scene: Scene) -> list[Hit]:
    """A GPU busy for the whole window while nothing progresses: a long kernel (gpu.long_kernel, alive until
    --max-slow), at working power or at idle power (one kernel spinning: a silent stall if it never ends,
    which one window cannot tell). Ranks in a collective are left to the distributed rule (NCCL busy-waits
    at 100%)."""
    gpu = scene.evidence.gpu
    if gpu is None or _in_collective(scene):
        return []
    busy = busy_devices(gpu)
    if not busy:
        return []
    d = busy[0]
    names = ", ".join(f"GPU {x.index}" for x in busy)
    util = f"{_mean(d.util_percent):.0f}% over {len(d.util_percent)} reads"
    power = _power_text(d)
    ev = (
        f"{names}: utilization {util}, {power}",
        *(f"GPU {x.index} throttled: {', '.join(x.throttle_reasons)}" for x in busy if x.throttle_reasons),
    )
    where = _where(scene, None)
    # Busy at idle power: one kernel spins (a kernel waiting on a flag, or one small block working alone).
    # Measured on an H200: torch.cuda._sleep, a finite spin of one thread, drew 124 W of 700 W at 100%,
    # the same as the idle GPU holding a context; a kernel that will never end looks the same. Power
    # proves no hang, so the job is alive until --max-slow (an Xid in the kernel log is a fault at once).
    spins = _at_idle_power(d) and not any(x.throttle_reasons for x in busy)
    summary = (
        f"{names} at 100% for the whole window at idle power ({power}): one kernel spins without computing "
        "(a kernel waiting on a flag, or a single block working alone) while the job's host side waits. "
        "Nothing proves it ends, nor that it never will: alive until --max-slow, then a silent GPU stall."
        if spins
        else f"{names} busy for the whole window ({util}, {power}) while the job's host side waits: a long kernel "
        "is running, so the job is alive."
    )
    return [
        named(
            Finding(
                Cause.GPU_LONG_KERNEL,
                0.6,
                summary,
                where,
                ev,
                fixes.SILENT_STALL_FIX if spins else fixes.LONG_KERNEL_FIX,
            ),
            End("busy", ev[0]),
        )
    ]


def annotate(findings: tuple[Finding, ...], verdict: Verdict, scene: Scene) -> tuple[Finding, ...]:
    """Add to the root cause what the GPUs and the kernel log say that decided nothing: all GPUs idle
    while hung (the host side is stuck), busy under a collective (NCCL busy-waits: 100% is not work),
    kernel lines that are not this job's or only informational."""
    if not findings:
        return findings
    root = findings[0]
    extra = [
        f"kernel log (not attributed to this job, or informational): {e.text[:160]}"
        for e in scene.evidence.kernel
        if e.kind != "nfs_ok" and (informational(e) or not _decided(scene, e))
    ][-2:]
    gpu = scene.evidence.gpu
    line = None
    if gpu is None or verdict != Verdict.HUNG:
        pass
    elif gpus_idle(gpu):
        reads = max((len(d.util_percent) for d in gpu.devices), default=0)
        line = (
            f"all {len(gpu.devices)} GPU(s) at 0% on every read of the window ({reads} reads): the host side "
            "is stuck, not the GPU"
        )
    elif root.cause in (Cause.DISTRIBUTED_PEER_STUCK, Cause.DISTRIBUTED_COLLECTIVE_STALLED) and (
        busy := busy_devices(gpu)
    ):  # (the ranks wait in a collective or a send: for a peer, or for a transport that stalled)
        line = (
            f"GPU {', '.join(str(d.index) for d in busy)} at ~100% while the ranks wait: NCCL kernels busy-wait "
            "inside the call they wait in (that is not work)"
        )
    if line is not None:
        extra.insert(0, line)
    if not extra:
        return findings
    return (replace(root, evidence=(*root.evidence, *extra)), *findings[1:])


def _decided(scene: Scene, e: KernelEvent) -> bool:
    """Whether kernel_rule turned this line into a finding."""
    if e.kind in ("xid", "sxid", "fell_off_bus", "amdgpu_fault"):
        return attributable(scene, e)
    if e.kind == "amdgpu_hog":
        return True
    if e.kind in ("oom_kill", "hung_task"):
        return e.pid in _job_pids(scene)
    return False
