"""The in-job heartbeat API. Import-cheap (stdlib only), about a microsecond a call, and a no-op
when the job does not run under ``hangwatch run``.

    import hangwatch
    for step, batch in enumerate(loader):
        ...
        hangwatch.beat(step)
    with hangwatch.phase("checkpoint", timeout=600):
        save(model)

Each process writes its own 128-byte slot, a memory-mapped file ``<pid>.hb`` in the directory
named by ``$HANGWATCH_HEARTBEAT_DIR``: a beat is one ``struct.pack_into``, no system call.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from types import TracebackType

ENV_DIR = "HANGWATCH_HEARTBEAT_DIR"
MAGIC = 0x31425748  # "HWB1"
SLOT_SIZE = 128
NAME_SIZE = 64
# magic u32, rank i32, pid u32, pad u32 | time f64, step i64, count u64 | phase deadline f64,
# phase started f64 | phase name 64 bytes
HEADER = struct.Struct("<iiII")
BEAT = struct.Struct("<dqQ")
PHASE = struct.Struct("<dd64s")
BEAT_OFFSET, PHASE_OFFSET = 16, 40


class _Slot:
    __slots__ = ("count", "mm")

    def __init__(self, directory: str) -> None:
        pid = os.getpid()
        # records/layout.py's BEAT_SUFFIX, spelled here: this runs in the job, and stays light to import
        fd = os.open(os.path.join(directory, f"{pid}.hb"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, SLOT_SIZE)
            self.mm = mmap.mmap(fd, SLOT_SIZE)
        finally:
            os.close(fd)
        rank = os.environ.get("RANK", "")
        HEADER.pack_into(self.mm, 0, MAGIC, int(rank) if rank.lstrip("-").isdigit() else -1, pid, 0)
        self.count = 0


_slot: _Slot | None = None
_resolved = False


def _open() -> _Slot | None:
    global _slot, _resolved  # noqa: PLW0603 - one lazily opened slot per process, by design
    _resolved = True
    directory = os.environ.get(ENV_DIR)
    if directory:
        try:
            _slot = _Slot(directory)
        except OSError:
            _slot = None  # a heartbeat must never break the job
    return _slot


def _forget() -> None:
    """After fork, the child gets its own slot on its first beat (not its parent's)."""
    global _slot, _resolved
    _slot, _resolved = None, False


os.register_at_fork(after_in_child=_forget)


def beat(step: int | None = None) -> None:
    """Tell hangwatch the job made progress (optionally: which step)."""
    slot = _slot if _resolved else _open()
    if slot is None:
        return
    slot.count += 1
    BEAT.pack_into(slot.mm, BEAT_OFFSET, time.time(), -1 if step is None else step, slot.count)


class phase:
    """Mark a known long phase (validation, checkpoint): no stall is declared inside it before
    ``timeout`` seconds (None: the run's own thresholds apply)."""

    __slots__ = ("name", "timeout")

    def __init__(self, name: str, timeout: float | None = None) -> None:
        self.name = name
        self.timeout = timeout

    def __enter__(self) -> phase:
        slot = _slot if _resolved else _open()
        if slot is not None:
            now = time.time()
            deadline = now + self.timeout if self.timeout else 0.0
            PHASE.pack_into(slot.mm, PHASE_OFFSET, deadline, now, self.name.encode()[:NAME_SIZE])
            beat()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        slot = _slot if _resolved else _open()
        if slot is not None:
            PHASE.pack_into(slot.mm, PHASE_OFFSET, 0.0, 0.0, b"")
            beat()
