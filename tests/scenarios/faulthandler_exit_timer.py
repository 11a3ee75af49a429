"""A process the job started arms faulthandler's exit timer, then waits on a lock it already holds: when the timer
fires, faulthandler dumps its stacks and ends it, and the job goes on. `python faulthandler_exit_timer.py SECONDS`:
the child's timer (8: within every bound, the job exits 0; 100000: past every bound, the child is hung)."""

import subprocess
import sys
from pathlib import Path

child = Path(__file__).with_name("_faulthandler_child.py")
code = subprocess.Popen([sys.executable, str(child), sys.argv[1]]).wait()
print(f"the child ended with {code}", flush=True)
print("done", flush=True)
