"""A process the job started arms a timer that ends it, then waits on a lock it already holds: when the timer fires,
the process ends, and the job goes on. `python exit_timer.py SECONDS KIND`: the child's timer (8: within every bound,
the job exits 0; 100000: past every bound, the child is hung). KIND `faulthandler`: `dump_traceback_later(SECONDS,
exit=True)`, which dumps its stacks and exits (_faulthandler_child.py); `alarm`: `signal.alarm(SECONDS)` with no
handler, whose signal ends it (a `python -c` child, the number written in its code)."""

import subprocess
import sys
from pathlib import Path

seconds, kind = sys.argv[1], sys.argv[2]
if kind == "faulthandler":
    command = [sys.executable, str(Path(__file__).with_name("_faulthandler_child.py")), seconds]
else:
    program = f"import signal, threading\nsignal.alarm({seconds})\nlock = threading.Lock()\nlock.acquire()\nlock.acquire()\n"
    command = [sys.executable, "-c", program]
status = subprocess.Popen(command).wait()
print(f"the child ended with {status}", flush=True)
print("done", flush=True)
