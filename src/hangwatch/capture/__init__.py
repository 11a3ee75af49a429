"""Capture: process tree, /proc state, Python stacks. Produces ``records.evidence`` values.

``capture_job`` is imported on first use: `hangwatch run` loads the capture machinery only when it
captures, so a job that never stalls pays nothing for it at start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hangwatch.capture.sampler import capture_job

__all__ = ["capture_job"]


def __getattr__(name: str) -> Any:
    if name == "capture_job":
        from hangwatch.capture.sampler import capture_job

        return capture_job
    raise AttributeError(name)
