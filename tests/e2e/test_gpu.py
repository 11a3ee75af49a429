"""GPU evidence, kernel faults and GPU-safe restarts, without a GPU.

The boundary is faked, nothing above it: real outputs of nvidia-smi, rocm-smi and kernel logs (from
public test data and issue threads: tests/fixtures/gpu/SOURCES.md) go through hangwatch's parsers;
an NVML stand-in with pynvml's function names drives the NVML backend; and a fake backend
(``HANGWATCH_GPU_FAKE``) stands in for the driver under real `hangwatch run` / `inspect` / `doctor`
processes, with a job that "holds" GPU memory while it lives.

Here the tests that start real processes; those that start none are in tests/unit/test_gpu.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FAST, clean_env, marker, py

GPU = Path(__file__).resolve().parents[1] / "fixtures" / "gpu"


# --- parsers on real outputs ---------------------------------------------------------------------------------


# --- the kernel log --------------------------------------------------------------------------------------------


# --- rules on records -------------------------------------------------------------------------------------------


# --- real processes, with the fake GPU at the boundary ------------------------------------------------------------
@pytest.fixture
def fake_gpu(tmp_path):
    path = tmp_path / "gpu.json"
    shutil.copy(GPU / "fake-2xh100.json", path)
    return path


@pytest.mark.e2e
def test_hang_on_a_gpu_job_shows_the_gpu_section_and_the_host_side_stuck(run, fake_gpu):
    r = run(*FAST, "--on-hang", "kill", *py("gpu_job.py", "--hang-at", "5"), env={"HANGWATCH_GPU_FAKE": str(fake_gpu)})
    assert r.returncode == 125, r.stderr.decode()[-2000:]
    inc = run.incident()
    root = inc["findings"][0]
    assert (root["cause"], (root["where"]["file"], root["where"]["line"])) == ("code.deadlock", marker("gpu_job.py"))
    assert "the host side is stuck" in root["evidence"][-1]
    g = inc["gpu"]
    assert g["backend"] == "fake" and g["reads"] >= 2 and len(g["devices"]) == 2
    (held,) = [p for p in g["processes"] if p["in_job"]]
    assert held["used_mib"] == 30000.0 and held["gpu"] == 0
    md = (run.dir / "incidents" / "001" / "report.md").read_text()
    assert "## GPUs and kernel log" in md and "holds 30000 MiB on GPU 0" in md


@pytest.mark.e2e
def test_restart_waits_for_the_gpu_memory_to_be_released(run, fake_gpu):
    r = run(
        *FAST,
        "--on-hang",
        "restart",
        "--fallback",
        "--safe",
        *py("gpu_job.py", "--hang-at", "4", "--steps", "8", "--release-after", "2"),
        env={"HANGWATCH_GPU_FAKE": str(fake_gpu)},
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    (ev,) = [e for e in run.events() if e["event"] == "gpu_release"]
    assert ev["released"] and 1.5 <= ev["seconds"] < 10 and ev["how"] == "per-process"
    assert b"GPU memory was released after" in r.stderr and run.summary()["attempts"] == 2


@pytest.mark.e2e
def test_memory_that_stays_held_is_not_relaunched_into(run, fake_gpu):
    r = run(
        *FAST,
        "--on-hang",
        "restart",
        "--fallback",
        "--safe",
        "--gpu-release-timeout",
        "2",
        *py("gpu_job.py", "--hang-at", "4", "--release-after", "-1"),
        env={"HANGWATCH_GPU_FAKE": str(fake_gpu)},
    )
    assert r.returncode == 125, r.stderr.decode()[-2000:]
    err = r.stderr.decode()
    assert "still held after 2 s" in err and "zombie context" in err and "not relaunching" in err
    assert "nvidia-smi --query-compute-apps" in err
    (ev,) = [e for e in run.events() if e["event"] == "gpu_release"]
    assert not ev["released"] and ev["zombies"] == [ev["held"][0]["pid"]]
    assert run.summary()["attempts"] == 1
    assert any(e["event"] == "give_up" and e["reason"] == "gpu memory held" for e in run.events())


@pytest.mark.e2e
def test_relaunch_on_held_gpu_relaunches_anyway(run, fake_gpu):
    r = run(
        *FAST,
        "--on-hang",
        "restart",
        "--fallback",
        "--safe",
        "--gpu-release-timeout",
        "1",
        "--relaunch-on-held-gpu",
        *py("gpu_job.py", "--hang-at", "4", "--steps", "6", "--release-after", "-1"),
        env={"HANGWATCH_GPU_FAKE": str(fake_gpu)},
    )
    assert r.returncode == 0 and b"relaunching anyway" in r.stderr and run.summary()["attempts"] == 2


@pytest.mark.e2e
def test_inspect_names_an_xid_from_the_kernel_log(start_job, fake_gpu, tmp_path):
    job = start_job("sleeper.py")
    env = clean_env(
        HANGWATCH_GPU_FAKE=str(fake_gpu), HANGWATCH_KMSG_FILE=str(GPU / "kmsg-nvidia-xid79-pid-unknown.txt")
    )
    r = subprocess.run(
        [sys.executable, "-m", "hangwatch", "inspect", str(job.pid), "--window", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    out = json.loads(r.stdout)
    root = out["findings"][0]
    assert root["cause"] == "gpu.fault" and "Xid 79" in root["summary"]
    assert [k["code"] for k in out["kernel"] if k["kind"] == "xid"] == [79]
    text = subprocess.run(
        [sys.executable, "-m", "hangwatch", "inspect", str(job.pid), "--window", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    ).stdout
    assert "GPU 0 NVIDIA H100 80GB HBM3" in text and "Kernel log since the job started" in text


@pytest.mark.e2e
def test_doctor_gpu_checks_on_the_fake_gpu(fake_gpu, tmp_path):
    data = json.loads(fake_gpu.read_text())
    data["devices"][1].update(persistence_mode=False, ecc_uncorrected=3)
    data["processes"] = [{"pid": 1, "gpu": 1, "used_mib": 4000, "release_after_exit_s": -1}]  # someone else's
    fake_gpu.write_text(json.dumps(data))
    env = clean_env(
        HANGWATCH_GPU_FAKE=str(fake_gpu),
        CUDA_VISIBLE_DEVICES="0,3",
        HANGWATCH_KMSG_FILE=str(GPU / "kmsg-nvidia-xid31-pid-name.txt"),
    )
    r = subprocess.run(
        [sys.executable, "-m", "hangwatch", "doctor", "--json", "--gpus", "4"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    checks = {c["id"]: c for c in json.loads(r.stdout)["checks"]}
    assert r.returncode == 1
    assert checks["gpu.driver"]["status"] == "ok" and "driver 570.124.06" in checks["gpu.driver"]["value"]
    assert checks["gpu.persistence"]["status"] == "warn" and "GPU 1" in checks["gpu.persistence"]["value"]
    assert checks["gpu.ecc"]["status"] == "fail"
    assert checks["gpu.busy"]["status"] == "warn" and "pid 1 holds 4000 MiB on GPU 1" in checks["gpu.busy"]["value"]
    assert (
        checks["gpu.visible_devices"]["status"] == "fail"
        and "names GPU(s) 3" in checks["gpu.visible_devices"]["summary"]
    )
    assert checks["kernel_log.readable"]["status"] == "warn" and "xid" in checks["kernel_log.readable"]["value"]
    assert checks["rocm.dataloader"]["status"] == "skip"
