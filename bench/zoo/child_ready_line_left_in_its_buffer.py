"""A trainer starts an eval server and reads its READY line: the line sits in the child's stdout buffer, both wait.

report: https://github.com/denoland/deno/issues/22767
saw: a parent waiting for a child's "ready" line over a pipe hung; the child had printed it, unflushed.
mechanism: with stdout a pipe, print() is block-buffered; the child waits on its stdin for a request, the parent waits on the pipe for the line that only a flush (or exit) would send.
expect: hung child.wait
accept: process.waits_on, code.deadlock
"""
import os
import subprocess
import sys

from _zoo import ready

SERVER = r'''
import sys
weights = [0.5] * 1000           # load the model
print("READY")                   # stdout is a pipe: block-buffered, the line stays in this process
for line in sys.stdin:           # serve one request per line
    print(sum(weights) * float(line), flush=True)
'''

if __name__ == "__main__":
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    srv = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, env=env)
    ready()
    if srv.stdout.readline().strip() != "READY":  # HANG-HERE
        sys.exit("eval server failed")
    srv.stdin.write("2\n")
    srv.stdin.flush()
    print("eval:", srv.stdout.readline().strip(), flush=True)
    srv.stdin.close()
    srv.wait()
