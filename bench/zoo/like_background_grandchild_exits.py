"""subprocess.run(capture_output=True) of a command whose background helper finishes after a while.

report: https://github.com/python/cpython/issues/76116
saw: run() returned only when the backgrounded grandchild, which held the output pipe, exited.
mechanism: healthy: the grandchild holding the pipe's write end sleeps a bounded time, then exits; the read ends and run() returns.
expect: healthy
"""
import subprocess

from _zoo import ready, seconds

if __name__ == "__main__":
    ready()
    cmd = f"echo warming cache; sleep {seconds(30):.0f} &"
    out = subprocess.run(["bash", "-c", cmd], capture_output=True)
    print(out.stdout.decode(), flush=True)
