"""Whether this machine has GPUs at all, for the cost of a glob: machines without them never import a
GPU library (or hangwatch's GPU modules) when `hangwatch run` starts."""

from __future__ import annotations

from pathlib import Path

FAKE_ENV = "HANGWATCH_GPU_FAKE"  # a JSON file of readings: the fake backend (tests, demos)
DRM = Path("/sys/class/drm")


def devices_present() -> bool:
    """Whether this machine has GPU device nodes (NVIDIA's /dev/nvidiaN, AMD's /dev/kfd or a DRM card
    with a busy counter)."""
    return (
        any(Path("/dev").glob("nvidia[0-9]*"))
        or Path("/dev/kfd").exists()
        or any(DRM.glob("card[0-9]*/device/gpu_busy_percent"))
    )
