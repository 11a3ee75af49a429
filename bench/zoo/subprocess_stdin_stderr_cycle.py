"""A trainer feeds frames to an encoder's stdin and never reads its stderr: both block.

report: https://github.com/ansible/ansible/pull/3991
also: https://github.com/facebookincubator/submitit/pull/1609
saw: "you should not feed input to the process if it's possible for the process to get blocked waiting on stdout/stderr writing".
mechanism: the child logs to a stderr pipe only the parent could read; the pipe fills and the child stops reading its stdin; the parent blocks writing the next frame into the full stdin pipe: each waits for the other.
expect: hung process.waits_on
accept: child.wait, code.deadlock
"""
import subprocess
import sys

from _zoo import ready

ENCODER = """import sys
for chunk in iter(lambda: sys.stdin.buffer.read(4096), b""):
    sys.stderr.write(f"encoded a frame chunk of {len(chunk)} bytes\\n" * 20)
"""

if __name__ == "__main__":
    p = subprocess.Popen([sys.executable, "-c", ENCODER], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    ready()
    frame = b"\0" * 65536
    for i in range(1000):
        p.stdin.write(frame)  # HANG-HERE
    p.stdin.close()
    p.wait()
