"""A thread makes a blocking native call without releasing the GIL (ctypes.PyDLL keeps it held, as a C extension
that does not wrap its blocking call in Py_BEGIN_ALLOW_THREADS does): no other thread of the process can run a line of
Python until the call returns. `python gil_held_native_sleep.py hang`: the call sleeps 100000 s; `... SECONDS`: it
sleeps that long, and the job goes on and ends."""

import ctypes
import sys
import threading
import time

seconds = 100000 if sys.argv[1] == "hang" else int(sys.argv[1])
libc = ctypes.PyDLL(None)


def read_device():
    libc.sleep(seconds)  # HANG-HERE


for step in range(30):
    print(f"step {step}", flush=True)
    if step == 3:
        threading.Thread(target=read_device, name="reader", daemon=True).start()
    time.sleep(0.2)
print("done", flush=True)
