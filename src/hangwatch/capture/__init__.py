"""Capture: process tree, /proc state, Python stacks. Produces ``hangwatch.evidence`` values."""

from hangwatch.capture.sampler import capture_job

__all__ = ["capture_job"]
