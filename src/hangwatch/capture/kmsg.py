"""The kernel log from an attempt's launch on. Opening it costs an open and a seek; the parsing (in
``capture/kernel.py``) is imported only when a capture reads it."""

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
            from hangwatch.capture.kernel import read_kernel_events

            self.events, self.note = list(read_kernel_events(0.0, env)[0]), None
            return
        try:
            self.fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(self.fd, 0, os.SEEK_END)
        except PermissionError:
            self.note = NOT_READABLE
        except OSError as e:
            self.note = f"the kernel log could not be read ({KMSG}: {e.strerror or e})"

    def read(self) -> tuple[KernelEvent, ...]:
        """Every event since the cursor was opened (the newest MAX_EVENTS)."""
        if self.fd is not None:
            from hangwatch.capture.kernel import _read_records, boot_time, classify, parse_kmsg_record

            booted = boot_time()
            try:
                for record in _read_records(self.fd):
                    at, message = parse_kmsg_record(record, booted)
                    ev = classify(message, at)
                    if ev is not None:
                        self.events.append(ev)
            except OSError as e:
                self.note = f"the kernel log could not be read ({KMSG}: {e.strerror or e})"
            del self.events[:-MAX_EVENTS]
        return tuple(self.events[-MAX_EVENTS:])

    def close(self) -> None:
        """Release the file."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
