"""`hangwatch doctor` against controlled environments: variables, limits, a small tmpfs.

Here the tests that start real processes; those that start none are in tests/unit/test_doctor.py.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest
from conftest import clean_env


def doctor(*args: str, env: dict[str, str] | None = None, nofile: int | None = None) -> tuple[int, dict]:
    def lower_limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    r = subprocess.run(
        [sys.executable, "-m", "hangwatch", "doctor", "--json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env or clean_env(),
        preexec_fn=lower_limit,
    )
    return r.returncode, {c["id"]: c for c in json.loads(r.stdout)["checks"]}


@pytest.mark.e2e
def test_schema_and_every_check_present():
    code, checks = doctor()
    assert code in (0, 1)
    assert set(checks) == {
        "shm.size",
        "mp.start_method",
        "env.tokenizers_parallelism",
        "env.omp_threads",
        "env.pythonunbuffered",
        "limits.nofile",
        "disk.free",
        "fs.network",
        "stacks.ptrace",
        "memory.swap",
        "gpu.driver",
        "gpu.persistence",
        "gpu.ecc",
        "gpu.busy",
        "gpu.visible_devices",
        "rocm.dataloader",
        "kernel_log.readable",
    }
    for c in checks.values():
        assert c["status"] in ("ok", "warn", "fail", "skip") and c["value"]
    assert checks["stacks.ptrace"]["status"] == "ok"  # this machine allows ptrace


@pytest.mark.e2e
def test_environment_hazards_are_flagged():
    env = clean_env(TOKENIZERS_PARALLELISM="true", OMP_NUM_THREADS="64")
    env.pop("PYTHONUNBUFFERED", None)
    _, checks = doctor(env=env)
    assert checks["env.tokenizers_parallelism"]["status"] == "warn"
    assert checks["env.omp_threads"]["status"] == "warn" and "OMP_NUM_THREADS=64" in checks["env.omp_threads"]["value"]
    assert checks["env.pythonunbuffered"]["status"] == "warn"
    _, ok = doctor(env=clean_env(TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1"))
    assert [ok[k]["status"] for k in ("env.tokenizers_parallelism", "env.omp_threads", "env.pythonunbuffered")] == [
        "ok",
        "ok",
        "ok",
    ]


@pytest.mark.e2e
def test_low_open_files_limit_fails_and_sets_the_exit_status():
    code, checks = doctor(nofile=256)
    assert checks["limits.nofile"]["status"] == "fail" and checks["limits.nofile"]["value"].startswith("256")
    assert code == 1


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "shm"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)], capture_output=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=30)


@pytest.mark.e2e
def test_small_shared_memory_and_full_disk(small_tmpfs):
    code, checks = doctor("--shm", str(small_tmpfs), "--checkpoint-dir", str(small_tmpfs))
    assert checks["shm.size"]["status"] == "warn" and checks["shm.size"]["value"].startswith("8 MiB")
    assert checks["disk.free"]["status"] == "fail"
    assert code == 1
    _, need = doctor("--shm", str(small_tmpfs), "--workers", "4", "--batch-mib", "16")
    assert need["shm.size"]["status"] == "fail" and "4 workers" in need["shm.size"]["summary"]
