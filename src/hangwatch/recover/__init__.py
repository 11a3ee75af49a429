"""Acting on a job: ending its whole tree cleanly, deciding restarts, applying fallbacks."""
