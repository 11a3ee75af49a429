"""Before its first step the job waits on something nobody will ever send, and nothing in it moves:
no known signature, no CPU, no wake-ups (a signal that never comes)."""

import signal

from _ready import ready

print("loading the dataset index", flush=True)
ready()
signal.pause()  # HANG-HERE
