"""The job runs a helper and waits for it (subprocess.run, no timeout); the helper sleeps for a duration
it reads at run time (no number on the line: only the kernel's view of the sleep says how long).
HW_SLEEP_S=1e9 is a sleep of 31 years (a hang); HW_SLEEP_S=20 is a pause the job outlives (its twin)."""

import os
import subprocess
import sys

from _ready import ready

HELPER = "import sys, time\nbackoff = float(sys.argv[1])\ntime.sleep(backoff)\n"

if __name__ == "__main__":
    ready()
    subprocess.run([sys.executable, "-c", HELPER, os.environ.get("HW_SLEEP_S", "1e9")], check=True)  # HANG-HERE
    print("helper done", flush=True)
