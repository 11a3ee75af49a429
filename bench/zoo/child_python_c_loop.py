"""A keep-alive helper started inline with `python -c` and waited on: the job waits for a loop with no way out.

report: https://github.com/rwth-i6/returnn/issues/1497
also: https://github.com/Red-Hat-AI-Innovation-Team/training_hub/pull/133
saw: the parent sits in os.waitpid for a sub-process that never ends.
mechanism: subprocess.run() waits for a `python -c "while True: time.sleep(1)"` helper; its loop has no exit, so the wait never returns (the loop's code is on its command line, not in a file).
expect: hung child.wait
accept: process.waits_on, code.busy_loop
"""
import subprocess
import sys

from _zoo import ready

if __name__ == "__main__":
    ready()
    subprocess.run([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])  # HANG-HERE
    print("helper ended", flush=True)
