"""The main thread sits in uninterruptible sleep (D): a vfork() whose child does not exec.

A stand-in for a process stuck in a driver or an NFS read (stack-capture.md §2.2).
"""

import ctypes

from _ready import ready

libc = ctypes.CDLL(None, use_errno=True)
ready()
if libc.vfork() == 0:
    libc.sleep(600)
    libc._exit(0)
