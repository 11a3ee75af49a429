"""`hangwatch doctor`'s GPU checks: driver and library, persistence mode, ECC, GPUs already busy with
other processes, CUDA_VISIBLE_DEVICES against what the job asks for, ROCm's DataLoader hazard, and
whether the kernel log (GPU faults, OOM kills) can be read. No GPU is a skip, never a failure."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from hangwatch.capture.gpu import bounded, detect
from hangwatch.capture.gpu_backends import SMI_TIMEOUT_S, GpuBackend, Reading
from hangwatch.capture.kernel import read_kernel_events
from hangwatch.records.doctor import Check, CheckStatus
from hangwatch.records.values import frozen

OK, WARN, FAIL, SKIP = CheckStatus.OK, CheckStatus.WARN, CheckStatus.FAIL, CheckStatus.SKIP
BUSY_MIB = 256.0  # another process holding more than this on a GPU makes it "busy"


@frozen
class GpuState:
    """One read of the GPUs for all checks (or why there is none)."""

    backend: GpuBackend | None
    reading: Reading | None
    note: str | None  # why there is no backend or no reading


def gpu_state(env: dict[str, str]) -> GpuState:
    """Detect and read once."""
    try:
        backend, note = detect(env, use_cache=False)
    except Exception as e:  # noqa: BLE001 - reported by the driver check
        return GpuState(None, None, f"GPU detection failed: {type(e).__name__}: {e}")
    if backend is None:
        return GpuState(None, None, note)
    try:
        return GpuState(backend, bounded(backend.read, SMI_TIMEOUT_S), None)
    except Exception as e:  # noqa: BLE001 - a failed read is what the driver check reports
        return GpuState(backend, None, f"{backend.name}: {e}")


def check_driver(g: GpuState, env: dict[str, str], gpus: int | None) -> Check:
    """Driver and library versions; a GPU that cannot be read."""
    if g.backend is None:
        if g.note is None:
            return Check("gpu.driver", SKIP, "no GPU", "no NVIDIA or AMD GPU on this machine", "")
        return Check(
            "gpu.driver",
            FAIL,
            "unreadable",
            g.note,
            "Install the driver's tools (`pip install 'hangwatch[gpu]'` for NVML) and check `nvidia-smi` "
            "or `rocm-smi` answers; `dmesg | grep -i -e xid -e amdgpu` for faults.",
        )
    versions = ", ".join(
        x
        for x in (
            f"driver {g.backend.driver}" if g.backend.driver else "",
            g.backend.library or "",
            f"via {g.backend.name}",
        )
        if x
    )
    if g.reading is None:
        return Check(
            "gpu.driver",
            FAIL,
            versions,
            f"the GPUs could not be read: {g.note}",
            "A GPU read that fails or hangs means a fallen GPU or a stuck driver: drain and reboot the node.",
        )
    names = "; ".join(f"{d.index}: {d.name}" for d in g.reading.devices)
    return Check("gpu.driver", OK, f"{versions}; {names}", f"{len(g.reading.devices)} GPU(s) answer", "")


def check_persistence(g: GpuState, env: dict[str, str], gpus: int | None) -> Check:
    """NVIDIA persistence mode (off: the driver tears down and re-inits the GPUs around each job)."""
    if g.reading is None:
        return Check("gpu.persistence", SKIP, "-", "no GPU read", "")
    off = [d.index for d in g.reading.devices if d.persistence_mode is False]
    known = [d for d in g.reading.devices if d.persistence_mode is not None]
    if not known:
        return Check("gpu.persistence", SKIP, "n/a", "the backend does not report persistence mode", "")
    if off:
        return Check(
            "gpu.persistence",
            WARN,
            f"off on GPU {', '.join(map(str, off))}",
            "persistence mode is off: each job start re-initializes the GPUs (slow first CUDA call, and "
            "a just-ended job's state is torn down late)",
            "`sudo nvidia-smi -pm 1`, or the nvidia-persistenced service.",
        )
    return Check("gpu.persistence", OK, "on", "persistence mode on", "")


def check_ecc(g: GpuState, env: dict[str, str], gpus: int | None) -> Check:
    """Uncorrected ECC errors and retired pages."""
    if g.reading is None:
        return Check("gpu.ecc", SKIP, "-", "no GPU read", "")
    bad = [d for d in g.reading.devices if d.ecc_uncorrected]
    retired = [d for d in g.reading.devices if d.retired_pages]
    if not any(d.ecc_uncorrected is not None or d.retired_pages is not None for d in g.reading.devices):
        return Check("gpu.ecc", SKIP, "n/a", "the GPUs do not report ECC", "")
    value = ", ".join(
        f"GPU {d.index}: {d.ecc_uncorrected or 0} uncorrected, {d.retired_pages or 0} retired pages"
        for d in g.reading.devices
        if d.ecc_uncorrected is not None or d.retired_pages is not None
    )
    if bad:
        return Check(
            "gpu.ecc",
            FAIL,
            value,
            "uncorrected ECC errors since the driver loaded: kernels on this GPU can fault or hang",
            "Exclude the GPU or reset it (`nvidia-smi -r`); report it if it repeats.",
        )
    if retired:
        return Check(
            "gpu.ecc",
            WARN,
            value,
            "pages were retired: this GPU's memory is wearing",
            "Watch `nvidia-smi -q -d PAGE_RETIREMENT,ROW_REMAPPER`; plan its replacement.",
        )
    return Check("gpu.ecc", OK, value, "no ECC errors", "")


def check_busy(g: GpuState, env: dict[str, str], gpus: int | None) -> Check:
    """GPUs already holding memory for other processes (the job will share them, or OOM)."""
    if g.reading is None:
        return Check("gpu.busy", SKIP, "-", "no GPU read", "")
    if g.backend is not None and not g.backend.per_process:
        used = [d for d in g.reading.devices if (d.memory_used_mib or 0) > BUSY_MIB]
        if used:
            return Check(
                "gpu.busy",
                WARN,
                ", ".join(f"GPU {d.index}: {d.memory_used_mib:.0f} MiB used" for d in used),
                "GPU memory is already in use",
                "Check who uses it: `rocm-smi --showpids`.",
            )
        return Check("gpu.busy", OK, "idle", "no GPU memory in use", "")
    me = os.getpid()
    others = [(pid, gpu, mib) for pid, gpu, mib in g.reading.processes if pid != me and (mib or 0) > BUSY_MIB]
    if others:
        value = ", ".join(f"pid {pid} holds {mib:.0f} MiB on GPU {gpu}" for pid, gpu, mib in others[:6])
        return Check(
            "gpu.busy",
            WARN,
            value,
            "other processes already hold GPU memory (a leftover job, a zombie worker, someone else's run)",
            "End them if they are leftovers (`nvidia-smi --query-compute-apps=pid,used_memory "
            "--format=csv`), or pick free GPUs with CUDA_VISIBLE_DEVICES.",
        )
    return Check("gpu.busy", OK, "no other processes", "the GPUs are free", "")


def _visible(env: dict[str, str], count: int) -> list[str] | None:
    raw = env.get("CUDA_VISIBLE_DEVICES", env.get("HIP_VISIBLE_DEVICES"))
    if raw is None:
        return None
    return [x.strip() for x in raw.split(",") if x.strip()] if raw.strip() else []


def check_visible_devices(g: GpuState, env: dict[str, str], gpus: int | None) -> Check:
    """CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES) against the GPUs present and what the job asks for."""
    if g.reading is None:
        return Check("gpu.visible_devices", SKIP, env.get("CUDA_VISIBLE_DEVICES", "unset"), "no GPU read", "")
    count = len(g.reading.devices)
    vis = _visible(env, count)
    value = "unset" if vis is None else ",".join(vis) or "(empty)"
    n_visible = count if vis is None else len(vis)
    if vis is not None:
        wrong = [x for x in vis if x.isdigit() and int(x) >= count]
        if wrong:
            return Check(
                "gpu.visible_devices",
                FAIL,
                value,
                f"names GPU(s) {', '.join(wrong)} but this machine has "
                f"{count}: CUDA sees fewer devices than you think (or none)",
                f"Use indexes 0..{count - 1} or the GPUs' UUIDs (`nvidia-smi -L`).",
            )
        if not vis:
            return Check(
                "gpu.visible_devices",
                WARN,
                value,
                "no GPU is visible to the job (the variable is empty)",
                "Unset it, or list the GPUs the job should use.",
            )
    if gpus is not None and gpus > n_visible:
        return Check(
            "gpu.visible_devices",
            FAIL,
            value,
            f"the job asks for {gpus} GPU(s) but {n_visible} are "
            "visible: ranks would share a GPU or fail to start (and the others wait for them)",
            "Lower --nproc-per-node, or make more GPUs visible.",
        )
    return Check(
        "gpu.visible_devices",
        OK,
        value,
        f"{n_visible} of {count} GPU(s) visible" + (f", the job asks for {gpus}" if gpus is not None else ""),
        "",
    )


def check_rocm_dataloader(g: GpuState, env: dict[str, str], gpus: int | None) -> Check:
    """ROCm and forked DataLoader workers: known to hang once the HIP runtime runs in the parent."""
    try:
        import importlib.metadata as md

        torch_v = md.version("torch")
    except Exception:  # noqa: BLE001 - not installed, or broken metadata
        torch_v = ""
    rocm = "rocm" in torch_v or (g.backend is not None and g.backend.name in ("rocm-smi", "sysfs"))
    if not rocm:
        return Check("rocm.dataloader", SKIP, torch_v or "no torch", "not a ROCm machine", "")
    return Check(
        "rocm.dataloader",
        WARN,
        f"torch {torch_v or '?'}",
        "ROCm DataLoader workers forked after the HIP runtime started are known to hang (kernel log: "
        "`amdgpu ... hogged CPU`, ring timeouts)",
        "DataLoader(multiprocessing_context='spawn'), or num_workers=0; `hangwatch run` applies that "
        "remedy on restart. HSA_ENABLE_INTERRUPT=0 for lost interrupts.",
    )


def check_kernel_log(g: GpuState, env: dict[str, str], gpus: int | None) -> Check:
    """Whether the kernel log can be read (GPU faults, OOM kills and hung tasks are named from it)."""
    t0 = time.monotonic()
    events, note = read_kernel_events(0.0, env)
    if note:
        return Check(
            "kernel_log.readable",
            WARN,
            "not readable",
            note,
            "Run hangwatch as root, or allow it: `sudo sysctl kernel.dmesg_restrict=0`.",
        )
    kinds = sorted({e.kind for e in events})
    value = f"readable ({time.monotonic() - t0:.2f} s)" + (f"; in the buffer: {', '.join(kinds)}" if kinds else "")
    if any(k in ("xid", "sxid", "fell_off_bus", "amdgpu_fault") for k in kinds):
        return Check(
            "kernel_log.readable",
            WARN,
            value,
            "the kernel log already holds GPU faults",
            "Read them: `dmesg | grep -i -e xid -e amdgpu`; a GPU that faulted may fault again.",
        )
    return Check("kernel_log.readable", OK, value, "GPU faults and OOM kills will be named from it", "")


GPU_CHECKS: tuple[Callable[[GpuState, dict[str, str], int | None], Check], ...] = (
    check_driver,
    check_persistence,
    check_ecc,
    check_busy,
    check_visible_devices,
    check_rocm_dataloader,
    check_kernel_log,
)


def run_gpu_checks(env: dict[str, str], gpus: int | None) -> list[Check]:
    """Every GPU check on one read; one that raises is a skip with the error."""
    g = gpu_state(env)
    out = []
    for check in GPU_CHECKS:
        try:
            out.append(check(g, env, gpus))
        except Exception as e:  # noqa: BLE001 - one broken check must not hide the others
            out.append(Check(check.__name__.removeprefix("check_"), SKIP, "error", f"the check failed: {e}", ""))
    return out
