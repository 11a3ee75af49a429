"""`hangwatch run`: launch a job, pump its output, read progress, detect stalls, act."""
