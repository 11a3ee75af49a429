"""The job runs a `python -c` helper that runs another, which stops itself (SIGSTOP) and nobody continues it: the
helper waits for it, the job waits for the helper. Neither of the two runs a file of the user's: the place is the
job's line that waits for them."""

import subprocess
import sys

inner = "import os, signal; os.kill(os.getpid(), signal.SIGSTOP)"
outer = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {inner!r}])"
subprocess.run([sys.executable, "-c", outer])  # HANG-HERE
print("done", flush=True)
