"""A child on a pseudo-terminal (for its colours and line buffering) is waited for before its output is read.

report: https://github.com/peplin/pygatt/issues/291
also: https://github.com/ThomasRooney/gexpect/issues/25
saw: pexpect's wait() "blocks forever if there is still output to be read"; strace: the child in write(1, ...), the parent in waitid().
mechanism: the child blocks writing to the pty's follower once the terminal's buffer is full; only the parent, which holds the leader and waits for the child, could read it.
expect: hung child.wait
"""
import os
import pty
import subprocess
import sys

from _zoo import ready

if __name__ == "__main__":
    leader, follower = pty.openpty()
    p = subprocess.Popen(
        [sys.executable, "-c", "for i in range(100000): print('step', i, 'loss 0.25')"],
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    ready()
    p.wait()  # HANG-HERE
    print(len(os.read(leader, 65536)), flush=True)
