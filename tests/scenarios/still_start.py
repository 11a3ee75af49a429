"""Before its first step the job waits on something nobody will ever send, and nothing in it moves: no CPU, no
wake-ups (a signal that never comes, waited for in ``sigwait``: named as a wait for a signal, never proven, since a
process outside the job may send one; ``signal.pause()`` with no handler is proven, tests/e2e/test_judgment.py)."""

import signal

from _ready import ready

print("loading the dataset index", flush=True)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
ready()
signal.sigwait({signal.SIGUSR1})  # HANG-HERE
