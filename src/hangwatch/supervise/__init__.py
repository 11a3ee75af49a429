"""`hangwatch run`: the run loop and its collaborators.

``supervisor.py`` launches attempts and, each poll, dispatches one handler per ``RunState``; the
collaborators share a ``RunContext`` (``context.py``, with ``config.py``'s settings and ``attempt.py``'s
records) and never reach back into the loop: each returns what happened (an ``AttemptEnd``), and the loop
alone sets how the run ends. The folders follow the loop:

- ``job/``: plan, launch and end the job's processes;
- ``progress/``: the signals it gives, into the stall detector;
- ``stall/``: from a suspected stall to the action taken;
- ``books/``: what is written down (summary, events, metrics, cost, budget, deadline);
- ``nodes/``: the other nodes of a multi-node job.
"""
