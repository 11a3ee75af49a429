"""The kernel log from an attempt's launch on: a cursor opened at the end of /dev/kmsg's buffer. Opening it is
all a launch does (two system calls, no parsing): the records are read and classified (``capture/kernel.py``
``read_cursor``) only when a look asks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hangwatch.records.gpu import KernelEvent

KMSG = Path("/dev/kmsg")
FILE_ENV = "HANGWATCH_KMSG_FILE"
MAX_EVENTS = 50  # the newest events kept
NOT_READABLE = (
    "the kernel log is not readable (kernel.dmesg_restrict): run as root, or "
    "`sudo sysctl kernel.dmesg_restrict=0`, to see GPU faults and OOM kills"
)


class KmsgCursor:
    """The kernel log from a point on: opened at an attempt's launch at the end of the buffer, so it
    reads only what the kernel logged since (no clock arithmetic, no earlier attempt's lines).
    Events accumulate over the attempt; a saved log ($HANGWATCH_KMSG_FILE) is read whole, once."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        env = dict(os.environ) if env is None else env
        self.events: list[KernelEvent] = []
        self.note: str | None = None
        self.fd: int | None = None
        self.saved = env.get(FILE_ENV)
        if self.saved:
            return  # read whole, at the first look (capture/kernel.py read_cursor)
        try:
            self.fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(self.fd, 0, os.SEEK_END)
        except PermissionError:
            self.note = NOT_READABLE
        except OSError as e:
            self.note = f"the kernel log could not be read ({KMSG}: {e.strerror or e})"

    def close(self) -> None:
        """Release the file."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
