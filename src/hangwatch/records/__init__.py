"""Records: the typed values that commands produce and renderers read (runs, probes, doctor checks).

The incident record lives in ``hangwatch.incident``. Records are plain dataclasses with their JSON
mapping; nothing here computes a diagnosis or reads the system.
"""
