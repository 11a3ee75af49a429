"""Births: each Python process of the job says it started, at its start and after each fork.

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import os


# Births: hangwatch looks at the job's tree every 2 s; a worker that starts and dies between two looks (a pool
# worker the OOM killer ends a second in) would go unseen, and its lost task unexplained. So each Python process
# of the job says it started, at its start and after each fork: heartbeat/born/<pid>-<start ticks> holds its
# parent, its name and its command line. hangwatch reads and removes each record at its next look.
def _born(directory: str) -> None:
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        with open("/proc/self/cmdline", "rb") as f:
            cmdline = f.read()
        comm = stat[stat.index(b"(") + 1 : stat.rindex(b")")]
        fields = stat[stat.rindex(b")") + 2 :].split()
        ppid, ticks = fields[1].decode(), fields[19].decode()  # stat's 4th and 22nd fields
        born = os.path.join(directory, "born")
        tmp = os.path.join(born, f".{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, ppid.encode() + b"\n" + comm.replace(b"\n", b" ") + b"\n" + cmdline)
        finally:
            os.close(fd)
        os.rename(tmp, os.path.join(born, f"{os.getpid()}-{ticks}"))  # whole, or not there
    except (OSError, ValueError, IndexError):
        pass
