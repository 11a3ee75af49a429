"""hangwatch: notice, explain and recover hung ML training jobs.

The in-job API is ``hangwatch.beat(step)`` and ``with hangwatch.phase(name, timeout=...)``;
importing hangwatch costs only the standard library.
"""

from hangwatch.beat import beat, phase

__version__ = "0.1.0"
__all__ = ["__version__", "beat", "phase"]
