"""Popen(stdout=PIPE) then wait(): the child fills the pipe and blocks, the parent waits for it.

report: https://github.com/localstack/localstack/pull/1101
also: https://github.com/google/turbinia/issues/945
saw: a subprocess that had finished its work never terminated; the docs: wait() "will deadlock when using stdout=PIPE and the child generates enough output".
mechanism: the child blocks writing into a full 64 KiB pipe that the parent, in wait(), never reads.
expect: hung child.wait
"""
import subprocess
import sys

from _zoo import ready

if __name__ == "__main__":
    p = subprocess.Popen([sys.executable, "-c", "print('x' * 1_000_000)"], stdout=subprocess.PIPE)
    ready()
    p.wait()  # HANG-HERE
    print(len(p.stdout.read()), flush=True)
