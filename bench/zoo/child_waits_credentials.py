"""A git-style child asks for credentials on a terminal nobody watches; the job waits for it.

report: https://github.com/nautobot/nautobot/pull/3925
also: https://github.com/buildkite/agent/pull/78
saw: start-up "hangs indefinitely" in a git clone; fixed with GIT_TERMINAL_PROMPT=0.
mechanism: the child reads its standard input (a terminal nobody watches) for a user name; the parent waits for the child.
expect: hung child.wait
accept: process.waits_for_input
stdin: tty
"""
import subprocess
import sys

from _zoo import ready

if __name__ == "__main__":
    print("cloning the dataset repository", flush=True)
    ready()
    subprocess.run([sys.executable, "-c", "input('Username for https://hub.example: ')"])  # HANG-HERE
