"""Diagnosis: evidence in, findings out. Rules read evidence; they never run commands.

The engine (and every rule) is imported on first use, like ``hangwatch.capture``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hangwatch.diagnose.engine import Diagnosis, diagnose

__all__ = ["Diagnosis", "diagnose"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from hangwatch.diagnose import engine

        return getattr(engine, name)
    raise AttributeError(name)
