"""A parent counts its children's ends with sigwait(SIGCHLD) while they work, one after another.

report: https://github.com/andikleen/mcelog/pull/34
saw: sigwait() for SIGCHLD is the way to wait for a child without a handler; it waits as long as a child works.
mechanism: healthy: one child computes for a while (its CPU time grows), then each child exits in turn and its signal ends a wait; the parent reaps and exits 0.
expect: healthy
"""
import signal
import subprocess
import sys

from _zoo import ready, seconds

WORK = "import time\nend = time.monotonic() + float(__import__('sys').argv[1])\nwhile time.monotonic() < end:\n    sum(range(10000))"

if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    child = subprocess.Popen([sys.executable, "-c", WORK, str(seconds(40))])
    ready()
    signal.sigwait({signal.SIGCHLD})
    child.wait(timeout=60)
    print("child done", child.returncode, flush=True)
