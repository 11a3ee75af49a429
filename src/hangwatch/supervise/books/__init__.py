"""The run's books: summary.json, events, the run directory, the status line, metrics, notifications,
cost, the budget and the deadline. Writes what the loop did. Never decides about a stall (except ending
a run over its budget or deadline, as the user asked)."""
