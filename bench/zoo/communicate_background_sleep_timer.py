"""subprocess.run(capture_output=True) of a command that backgrounds `sleep 100000`: run() waits 27 hours.

report: https://github.com/python/cpython/issues/76116
also: https://github.com/NousResearch/hermes-agent/pull/12647
saw: "subprocess.run() timeout not working with grandchildren and stdout=PIPE": run() returns only when the background helper exits.
mechanism: the backgrounded native `sleep 100000` inherited the output pipe's write end; communicate() reads until every write end closes, 27 h from now, past every bound.
expect: hung process.waits_on
accept: child.wait
"""
import subprocess

from _zoo import ready

if __name__ == "__main__":
    ready()
    out = subprocess.run(["bash", "-c", "echo mounted; sleep 100000 &"], capture_output=True)  # HANG-HERE
    print(out.stdout.decode(), flush=True)
