"""A child on a pseudo-terminal writes more than the terminal holds; the parent reads it slowly, then waits.

report: https://github.com/peplin/pygatt/pull/292
saw: the fix for pexpect's wait() blocking: read the buffers before waiting.
mechanism: healthy: the child blocks writing to the full pty most of the time while the parent reads a piece every half second (it parses as it reads); then the parent reads the rest until EOF (EIO on Linux) and waits; the child exits 0.
expect: healthy
"""
import os
import pty
import subprocess
import sys
import time

from _zoo import ready, seconds

if __name__ == "__main__":
    leader, follower = pty.openpty()
    p = subprocess.Popen(
        [sys.executable, "-c", "for i in range(100000): print('step', i, 'loss 0.25')"],
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    ready()
    got, slow_until = 0, time.monotonic() + seconds(40)
    while True:
        if time.monotonic() < slow_until:
            time.sleep(0.5)
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: every copy of the follower is closed
            break
        if not chunk:
            break
        got += len(chunk)
    p.wait(timeout=120)
    print("read", got, flush=True)
