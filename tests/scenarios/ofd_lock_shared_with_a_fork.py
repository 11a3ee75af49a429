"""An open file description (OFD) lock shared with a forked worker. The parent takes it and forks a worker, which
inherits the locked open file, opens the file again and locks it. `python ofd_lock_shared_with_a_fork.py SECONDS`: the
parent unlocks after SECONDS through its copy (any holder of the open file may), and the job ends. `python
ofd_lock_shared_with_a_fork.py hang`: the parent closes its copy instead; the worker's inherited copy keeps the lock,
so the worker waits for itself."""

import fcntl
import os
import struct
import sys
import tempfile
import time

F_OFD_SETLK, F_OFD_SETLKW = 37, 38  # <linux/fcntl.h>
LOCK, UNLOCK = (struct.pack("hhqqi4x", how, 0, 0, 0, 0) for how in (fcntl.F_WRLCK, fcntl.F_UNLCK))
path = os.path.join(tempfile.mkdtemp(), "ckpt.lock")
held = os.open(path, os.O_RDWR | os.O_CREAT)
fcntl.fcntl(held, F_OFD_SETLKW, LOCK)
pid = os.fork()
if pid == 0:
    again = os.open(path, os.O_RDWR)
    print("worker locking", flush=True)
    fcntl.fcntl(again, F_OFD_SETLKW, LOCK)  # HANG-HERE
    os._exit(0)
if sys.argv[1] == "hang":
    time.sleep(1)
    os.close(held)
else:
    time.sleep(float(sys.argv[1]))
    fcntl.fcntl(held, F_OFD_SETLK, UNLOCK)
print("waiting for the worker", flush=True)
os.waitpid(pid, 0)
print("done", flush=True)
