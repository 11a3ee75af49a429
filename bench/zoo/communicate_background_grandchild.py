"""subprocess.run(capture_output=True) of a command that starts a background helper: run() never returns.

report: https://github.com/python/cpython/issues/76116
also: https://github.com/NousResearch/hermes-agent/pull/12647
saw: "subprocess.run() timeout not working with grandchildren and stdout=PIPE"; an agent's terminal tool "could freeze a whole session" after `cmd &`.
mechanism: communicate() reads the child's pipes until every write end is closed; the backgrounded grandchild inherited them and never exits, so the end never comes, though the child itself has exited.
expect: hung process.waits_on
accept: child.wait
"""
import subprocess

from _zoo import ready

if __name__ == "__main__":
    ready()
    out = subprocess.run(["bash", "-c", "echo mounted; sleep infinity &"], capture_output=True)  # HANG-HERE
    print(out.stdout.decode(), flush=True)
