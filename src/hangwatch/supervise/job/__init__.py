"""The job itself: how an attempt is planned (its argv and environment), launched (a pty or pipes, the
output pump), signalled, and ended; the startup hook autobeat injects; the wait for its GPU memory.
Owns the job's processes. Never decides whether the job is stuck (that is ``stall/``)."""
