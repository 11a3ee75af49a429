"""Diagnosis: evidence in, findings out. Rules read evidence; they never run commands."""

from hangwatch.diagnose.engine import Diagnosis, diagnose

__all__ = ["Diagnosis", "diagnose"]
