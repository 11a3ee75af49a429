"""hangwatch: notice, explain and recover hung ML training jobs.

The in-job API is ``hangwatch.beat(step)`` and ``with hangwatch.phase(name, timeout=...)``;
importing hangwatch costs only the standard library. The library face (``inspect_pid``, ``read_run``,
``list_runs``, ``read_incident``: ``hangwatch/api.py``) is imported on first use.
"""

from __future__ import annotations

from typing import Any

from hangwatch.beat import beat, phase

__version__ = "0.1.0"
__all__ = ["__version__", "beat", "inspect_pid", "list_runs", "phase", "read_incident", "read_run"]
_API = frozenset({"inspect_pid", "list_runs", "read_incident", "read_run"})


def __getattr__(name: str) -> Any:
    if name in _API:
        from hangwatch import api

        return getattr(api, name)
    raise AttributeError(f"module 'hangwatch' has no attribute {name!r}")
