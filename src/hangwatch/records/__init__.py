"""Records: the typed values that commands produce and renderers read (runs, probes, doctor checks).

The incident (``records/incident.py``) and the evidence (``records/evidence.py``) are records too. Records are
plain dataclasses with their JSON mapping; nothing here computes a diagnosis or reads the system, and nothing here
imports from outside ``records/`` but the catalogue of causes and the standard library.
"""
