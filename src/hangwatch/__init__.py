"""hangwatch: notice, explain and recover hung ML training jobs."""

__version__ = "0.1.0"
