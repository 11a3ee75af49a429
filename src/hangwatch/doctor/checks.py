"""`hangwatch doctor`: environment hazards known to hang training, each with its measured value and fix.

Checks read the machine (statvfs, /proc, rlimits, the environment, tool versions); each returns a
Check value, and a check that cannot run says "skip" with the reason, never raises.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from hangwatch.records.doctor import Check, CheckStatus
from hangwatch.records.values import frozen

OK, WARN, FAIL, SKIP = CheckStatus.OK, CheckStatus.WARN, CheckStatus.FAIL, CheckStatus.SKIP

GiB = 1 << 30
MiB = 1 << 20
NETWORK_FS = (
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "fuse",
    "fuse.sshfs",
    "fuse.s3fs",
    "fuse.gcsfuse",
    "fuse.juicefs",
    "fuse.rclone",
    "lustre",
    "gpfs",
    "beegfs",
    "ceph",
    "glusterfs",
    "9p",
    "virtiofs",
)


@frozen
class DoctorInputs:
    """What the checks look at; tests point these at controlled places."""

    env: Mapping[str, str]
    shm: Path = Path("/dev/shm")  # noqa: S108 - the shared-memory mount itself, not a temp file
    checkpoint_dir: Path = Path(".")
    data_dir: Path | None = None
    mounts: Path = Path("/proc/mounts")
    workers: int | None = None  # DataLoader workers the job will use, when known
    batch_mib: float | None = None  # size of one batch in MiB, when known
    prefetch_factor: int = 2
    gpus: int | None = None  # GPUs the job will use (torchrun --nproc-per-node), when known


def _size(n: float) -> str:
    return f"{n / GiB:.1f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


def check_shm(inp: DoctorInputs) -> Check:
    """The shared-memory mount against what the DataLoader workers will need."""
    try:
        st = os.statvfs(inp.shm)
    except OSError as e:
        return Check("shm.size", SKIP, "unreadable", f"cannot read {inp.shm}: {e.strerror}", "")
    size, free = st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize
    value = f"{_size(size)} ({_size(free)} free)"
    fix = "Raise it: `docker run --shm-size=8g` (or --ipc=host); Kubernetes: an emptyDir with medium: Memory."
    if inp.workers and inp.batch_mib:
        need = inp.workers * inp.prefetch_factor * inp.batch_mib * MiB * 2  # in flight, with headroom
        if free < need:
            return Check(
                "shm.size",
                FAIL,
                value,
                f"DataLoader workers need about {_size(need)} of shared memory "
                f"for {inp.workers} workers x {inp.prefetch_factor} batches of {inp.batch_mib:g} MiB",
                fix,
            )
    if size < 256 * MiB:
        return Check(
            "shm.size",
            WARN,
            value,
            "shared memory is small (containers default to 64 MiB): DataLoader "
            "workers die with a bus error or hang when it fills",
            fix,
        )
    return Check("shm.size", OK, value, "enough shared memory for DataLoader workers", fix)


def check_start_method(inp: DoctorInputs) -> Check:
    """The default multiprocessing start method (fork hazards)."""
    method = multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
    fix = (
        "DataLoader(multiprocessing_context='spawn') if the job starts threads, uses OpenMP, tokenizers or "
        "CUDA before its workers fork."
    )
    if method == "fork":
        return Check(
            "mp.start_method",
            WARN,
            f"fork (Python {sys.version_info.major}.{sys.version_info.minor})",
            "workers fork a copy of the parent: a lock or thread pool held by another thread at that "
            "moment is copied locked and deadlocks the worker",
            fix,
        )
    return Check("mp.start_method", OK, method, "workers start fresh; datasets must be picklable", fix)


def check_tokenizers(inp: DoctorInputs) -> Check:
    """TOKENIZERS_PARALLELISM (a fast tokenizer used before fork deadlocks workers)."""
    v = inp.env.get("TOKENIZERS_PARALLELISM")
    fix = "TOKENIZERS_PARALLELISM=false (or tokenize only inside the workers)."
    if v is not None and v.lower() in ("1", "true", "yes"):
        return Check(
            "env.tokenizers_parallelism",
            WARN,
            v,
            "set to true: a fast tokenizer used before the "
            "DataLoader forks deadlocks its workers (tokenizers only protects itself when unset)",
            fix,
        )
    return Check("env.tokenizers_parallelism", OK, v or "unset", "tokenizers disables its pool after fork", fix)


def check_threads(inp: DoctorInputs) -> Check:
    """OMP_NUM_THREADS / MKL_NUM_THREADS against the cores."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    values = {k: inp.env[k] for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS") if k in inp.env}
    value = ", ".join(f"{k}={v}" for k, v in values.items()) or "unset"
    fix = f"OMP_NUM_THREADS/MKL_NUM_THREADS at most {cores} (cores) divided by ranks and workers per node."
    try:
        too_many = [k for k, v in values.items() if int(v) > cores]
    except ValueError:
        return Check("env.omp_threads", WARN, value, "not a number", fix)
    if too_many:
        return Check(
            "env.omp_threads",
            WARN,
            f"{value} on {cores} cores",
            "more threads than cores: ranks and workers oversubscribe the CPU and crawl (it looks hung)",
            fix,
        )
    return Check("env.omp_threads", OK, f"{value} on {cores} cores", "no oversubscription from these", fix)


def check_unbuffered(inp: DoctorInputs) -> Check:
    """PYTHONUNBUFFERED (a redirected log that looks frozen)."""
    v = inp.env.get("PYTHONUNBUFFERED")
    fix = "PYTHONUNBUFFERED=1 (hangwatch run sets it), or python -u."
    if not v:
        return Check(
            "env.pythonunbuffered",
            WARN,
            "unset",
            "with output redirected to a file (nohup, Slurm), prints arrive in 8 KiB chunks and the log looks frozen",
            fix,
        )
    return Check("env.pythonunbuffered", OK, v, "output is flushed as it is printed", fix)


def check_nofile(inp: DoctorInputs) -> Check:
    """The open-files limit (workers pass tensors as file descriptors)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    value = f"{soft} (hard {hard})"
    fix = "ulimit -n 65536 (or torch.multiprocessing.set_sharing_strategy('file_system'))."
    if soft < 1024:
        return Check(
            "limits.nofile",
            FAIL,
            value,
            "DataLoader workers pass tensors as file descriptors: 'Too many open files' ends communication with them",
            fix,
        )
    if soft < 4096:
        return Check("limits.nofile", WARN, value, "low for many DataLoader workers and large batches", fix)
    return Check("limits.nofile", OK, value, "enough file descriptors", fix)


def check_disk(inp: DoctorInputs) -> Check:
    """Free disk where checkpoints go."""
    try:
        du = shutil.disk_usage(inp.checkpoint_dir)
    except OSError as e:
        return Check("disk.free", SKIP, "unreadable", f"cannot read {inp.checkpoint_dir}: {e.strerror}", "")
    value = f"{_size(du.free)} free at {inp.checkpoint_dir}"
    fix = "Free space, or pass the checkpoint directory on a larger disk (--checkpoint-dir)."
    if du.free < GiB:
        return Check("disk.free", FAIL, value, "a checkpoint write will fail or stall", fix)
    if du.free < 10 * GiB:
        return Check("disk.free", WARN, value, "little room for checkpoints", fix)
    return Check("disk.free", OK, value, "room for checkpoints", fix)


def mount_of(path: Path, mounts_text: str) -> tuple[str, str] | None:
    """(mount point, filesystem type) of the mount holding ``path``, from /proc/mounts text."""
    target = str(path.resolve())
    best: tuple[str, str] | None = None
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        if (target == point or target.startswith(point.rstrip("/") + "/")) and (
            best is None or len(point) > len(best[0])
        ):
            best = (point, parts[2])
    return best


def check_network_fs(inp: DoctorInputs) -> Check:
    """Data or checkpoints on a network filesystem."""
    try:
        text = inp.mounts.read_text()
    except OSError:
        return Check("fs.network", SKIP, "unreadable", f"cannot read {inp.mounts}", "")
    found = []
    for label, p in (("data", inp.data_dir), ("checkpoints", inp.checkpoint_dir)):
        if p is None:
            continue
        m = mount_of(p, text)
        if m is not None and (m[1] in NETWORK_FS or m[1].startswith("fuse.")):
            found.append(f"{label} on {m[1]} ({m[0]})")
    fix = "Stage the data on local disk or /dev/shm; write checkpoints locally and copy them out."
    if found:
        return Check(
            "fs.network",
            WARN,
            "; ".join(found),
            "reads on a network filesystem stall workers in uninterruptible sleep (D) and look like hangs",
            fix,
        )
    return Check("fs.network", OK, "local", "data and checkpoints are on local filesystems", fix)


def check_stacks(inp: DoctorInputs) -> Check:
    """Whether Python stacks can be read here (py-spy present, ptrace allowed)."""
    from hangwatch.capture.stacks import find_py_spy

    py_spy = find_py_spy()
    fix = "pip install py-spy; run as the job's user or root, or grant CAP_SYS_PTRACE (docker --cap-add SYS_PTRACE)."
    if py_spy is None:
        return Check("stacks.ptrace", FAIL, "py-spy missing", "no Python stacks can be read", fix)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.3)
        r = subprocess.run(
            [py_spy, "dump", "--pid", str(child.pid)], capture_output=True, text=True, timeout=20, check=False
        )
    except subprocess.TimeoutExpired:
        return Check("stacks.ptrace", FAIL, py_spy, "py-spy did not answer in 20 s", fix)
    finally:
        child.kill()
        child.wait(timeout=10)
    if r.returncode != 0:
        return Check(
            "stacks.ptrace",
            FAIL,
            py_spy,
            "py-spy cannot attach here: " + (r.stderr.strip().splitlines() or ["unknown error"])[0][:120],
            fix,
        )
    return Check("stacks.ptrace", OK, py_spy, "Python stacks of the job can be read", fix)


def check_swap(inp: DoctorInputs) -> Check:
    """Swap in use."""
    try:
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines() if ":" in line)
        total, free = (int(info[k].split()[0]) * 1024 for k in ("SwapTotal", "SwapFree"))
    except (OSError, KeyError, ValueError):
        return Check("memory.swap", SKIP, "unreadable", "cannot read /proc/meminfo", "")
    value = f"{_size(total)} ({_size(total - free)} used)"
    if total and (total - free) > total / 2:
        return Check(
            "memory.swap",
            WARN,
            value,
            "heavy swapping makes training crawl (it looks hung)",
            "Fewer workers or a smaller prefetch_factor; more memory.",
        )
    return Check(
        "memory.swap",
        OK,
        value,
        "no swap pressure" if total else "no swap: the OOM killer acts at once",
        "Watch for 'killed by signal: Killed' in DataLoader errors (OOM).",
    )


CHECKS: tuple[Callable[[DoctorInputs], Check], ...] = (
    check_shm,
    check_start_method,
    check_tokenizers,
    check_threads,
    check_unbuffered,
    check_nofile,
    check_disk,
    check_network_fs,
    check_stacks,
    check_swap,
)


def run_checks(inp: DoctorInputs) -> list[Check]:
    """Every check; one that raises becomes a ``skip`` with the error."""
    out = []
    for check in CHECKS:
        try:
            out.append(check(inp))
        except Exception as e:  # noqa: BLE001 - one broken check must not hide the others
            out.append(Check(check.__name__.removeprefix("check_"), SKIP, "error", f"the check failed: {e}", ""))
    from hangwatch.doctor.gpu_checks import run_gpu_checks

    try:
        return out + run_gpu_checks(dict(inp.env), inp.gpus)
    except Exception as e:  # noqa: BLE001 - the GPU checks failing must not hide the others
        return [*out, Check("gpu.driver", SKIP, "error", f"the GPU checks failed: {e}", "")]
