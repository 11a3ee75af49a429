"""Before its first step the job waits on something nobody will ever send, and nothing in it moves:
no known signature, no CPU, no wake-ups (a signal that never comes, waited for in ``sigwait``: a call
hangwatch reads no arguments of; ``signal.pause()`` with no handler is proven, tests/e2e/test_judgment.py)."""

import signal

from _ready import ready

print("loading the dataset index", flush=True)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
ready()
signal.sigwait({signal.SIGUSR1})  # HANG-HERE
