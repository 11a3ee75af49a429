"""Progress: the signals a job gives (log counters, heartbeats, checkpoints), taken into the attempt's
stall detector once per poll. Owns the detector and the step history. Never captures or acts on a job."""
