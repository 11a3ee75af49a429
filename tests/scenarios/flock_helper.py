"""The job holds a flock on its cache and runs the native `flock` on the same file. `python flock_helper.py WAIT`:
`8`, the helper gives up after 8 s (`flock -w 8`: a POSIX timer that sends it SIGALRM, which it catches, ends its
wait), and the job goes on; `none`, no -w: the helper waits for the job, the job for the helper (a cycle)."""

import fcntl
import os
import subprocess
import sys
import tempfile

wait = sys.argv[1]
path = os.path.join(tempfile.mkdtemp(), "cache.lock")
held = open(path, "w")  # noqa: SIM115 (held to the end: the lock is the job's)
fcntl.flock(held, fcntl.LOCK_EX)
print("building the cache", flush=True)
give_up = ["-w", wait] if wait != "none" else []
status = subprocess.run(["flock", *give_up, path, "true"]).returncode  # HANG-HERE
print(f"the helper ended with {status}", flush=True)
print("done", flush=True)
