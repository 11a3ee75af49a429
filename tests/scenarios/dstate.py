"""The main thread sits in uninterruptible sleep (D): a vfork() whose child does not exec.

A stand-in for a process stuck in a driver or an NFS read (docs/facts.md#reading-stacks-with-py-spy).
"""

import ctypes

from _ready import ready

libc = ctypes.CDLL(None, use_errno=True)
ready()
if libc.vfork() == 0:
    libc.sleep(600)
    libc._exit(0)
