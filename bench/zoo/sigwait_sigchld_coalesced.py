"""A parent counts its children's ends with sigwait(SIGCHLD); two ended together, and one signal came for both.

report: https://github.com/andikleen/mcelog/pull/34
saw: the process hung in sigwait() waiting for SIGCHLD signals that never arrive (its children had all exited); hung copies piled up under cron.
mechanism: SIGCHLD is a standard signal: blocked and pending, a second one is not queued. The parent waits in rt_sigtimedwait with no timeout, with no child left to send one.
expect: hung process.waits_on
"""
import signal
import subprocess
import sys
import time

from _zoo import ready

if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    children = [subprocess.Popen([sys.executable, "-c", "pass"]) for _ in range(3)]
    time.sleep(2)  # the parent logs its start meanwhile; the children end together
    ready()
    running = len(children)
    while running:
        signal.sigwait({signal.SIGCHLD})  # HANG-HERE
        running -= 1
    print("all children done", flush=True)
