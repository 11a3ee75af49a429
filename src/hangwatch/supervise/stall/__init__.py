"""A stall, from suspicion to action: startup probes, the suspect round (look, capture, judge), the
capture thread, and what is done about a hang (report, kill, restart). Owns incidents and the decision.
Never reads the job's output directly (``progress/`` does) and never launches it (``job/`` does)."""
