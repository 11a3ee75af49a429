"""Runs on this machine, as `hangwatch ls` and `hangwatch watch` see them: the per-user index of run
directories, and a run's state read from its files (never from the supervisor itself)."""
