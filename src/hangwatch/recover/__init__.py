"""Ending a job's tree cleanly; the restart ladder."""
