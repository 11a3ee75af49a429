"""The same eval server flushes its READY line after loading its model for a while: the trainer's readline returns.

report: https://github.com/denoland/deno/issues/22767
saw: the fix: the child flushes the line it is read for.
mechanism: healthy: the parent waits on the pipe while the child loads (asleep in pieces), then prints READY with flush=True and serves.
expect: healthy
"""
import os
import subprocess
import sys

from _zoo import ready, seconds

SERVER = r'''
import sys, time
deadline = time.monotonic() + %f
while time.monotonic() < deadline:   # load the model: silent, in pieces
    time.sleep(0.5)
weights = [0.5] * 1000
print("READY", flush=True)
for line in sys.stdin:
    print(sum(weights) * float(line), flush=True)
'''

if __name__ == "__main__":
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    srv = subprocess.Popen([sys.executable, "-c", SERVER % seconds(12)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, env=env)
    ready()
    if srv.stdout.readline().strip() != "READY":
        sys.exit("eval server failed")
    srv.stdin.write("2\n")
    srv.stdin.flush()
    print("eval:", srv.stdout.readline().strip(), flush=True)
    srv.stdin.close()
    srv.wait()
