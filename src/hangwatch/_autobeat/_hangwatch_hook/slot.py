"""This process's heartbeat slot: the time, step and count of each beat, and the phase it is in (the layout
``hangwatch.beat`` uses).

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
import time

TYPE_CHECKING = False  # typing is not imported at the job's start (about 7 ms of every Python process's start)
if TYPE_CHECKING:
    from typing import Any

MAGIC = 0x31425748
SLOT_SIZE = 128
NAME_SIZE = 64
HEADER = struct.Struct("<iiII")
BEAT = struct.Struct("<dqQ")
PHASE = struct.Struct("<dd64s")
BEAT_OFFSET, PHASE_OFFSET = 16, 40


class _Beats:
    """This process's slot, opened on the first beat (a forked child opens its own)."""

    def __init__(self, directory: str, phase_timeout: float) -> None:
        self.directory = directory
        self.phase_timeout = phase_timeout
        self.reset()

    def reset(self) -> None:
        """Forget the slot (after fork: the child opens its own on its first beat)."""
        self.mm: mmap.mmap | None = None
        self.failed = False
        self.count = 0
        self.step = -1
        self.rank = -1
        self.rank_check_at = 0.0
        self.total = 0  # the trainer's max steps, when it is known
        self.offset = 0  # the trainer's global step at its start (a run resumed from a checkpoint)
        self.per_optimizer: dict[int, int] = {}
        self.phases: list[tuple[str, float, float]] = []
        self.flight: Any = None  # this rank's flight recorder reader (a forked child starts none)
        self.flight_entry: dict[str, Any] = {}

    def _open(self) -> mmap.mmap | None:
        if self.failed:
            return None
        try:
            fd = os.open(os.path.join(self.directory, f"{os.getpid()}.hb"), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                os.ftruncate(fd, SLOT_SIZE)
                self.mm = mmap.mmap(fd, SLOT_SIZE)
            finally:
                os.close(fd)
            self._header()
        except (OSError, ValueError):
            self.failed = True
            self.mm = None
        return self.mm

    def _header(self) -> None:
        rank = os.environ.get("RANK", "")
        if rank.lstrip("-").isdigit():
            self.rank = int(rank)
        else:
            self.rank = _dist_rank()
        if self.mm is not None:
            HEADER.pack_into(self.mm, 0, MAGIC, self.rank, os.getpid(), self.total)

    def set_total(self, total: Any) -> None:
        """The steps the trainer will run (its max steps), for the ETA; 0 or unknown is left out."""
        try:
            n = int(total)
        except (TypeError, ValueError, OverflowError):
            return
        if 0 < n < 2**32:
            self.total = n
            if (self.mm if self.mm is not None else self._open()) is not None:
                self._header()

    def set_start(self, done: Any) -> None:
        """The trainer's global step when it starts (a resumed run starts past 0): beats then count from
        there, in the unit of its max steps, so the ETA of a resumed run is the rest of it."""
        try:
            n = int(done)
        except (TypeError, ValueError, OverflowError):
            return
        if n > 0 and not self.per_optimizer:
            self.offset = n

    def beat(self) -> None:
        """One beat: the time, the step, the count."""
        mm = self.mm if self.mm is not None else self._open()
        if mm is None:
            return
        self.count += 1
        BEAT.pack_into(mm, BEAT_OFFSET, time.time(), self.step, self.count)

    def optimizer_step(self, optimizer: object) -> None:
        """The global optimizer step post-hook."""
        n = self.per_optimizer.get(id(optimizer), 0) + 1
        self.per_optimizer[id(optimizer)] = n
        self.step = max(self.step, self.offset + n)
        if self.rank < 0 and self.mm is not None and time.monotonic() >= self.rank_check_at:
            # mp.spawn ranks learn their rank at init_process_group: asked again once a second, not at every step
            # (the ask costs about 2 us, a tenth of a fast step's budget for all of hangwatch)
            self.rank_check_at = time.monotonic() + 1.0
            self._header()
        self.beat()

    def enter(self, name: str, timeout: float | None) -> None:
        """A phase starts (phases nest; the innermost is shown)."""
        mm = self.mm if self.mm is not None else self._open()
        if mm is None:
            return
        now = time.time()
        self.phases.append((name, now + timeout if timeout else 0.0, now))
        PHASE.pack_into(mm, PHASE_OFFSET, self.phases[-1][1], now, name.encode()[:NAME_SIZE])
        self.beat()

    def saved(self, path: Any, kind: str, step: Any = None) -> None:
        """A checkpoint was written to ``path`` (a str or os.PathLike; a buffer is not a checkpoint file)."""
        try:
            if not isinstance(path, (str, os.PathLike)):
                return
            n = int(step) if step is not None else (self.step if self.step >= 0 else None)
            import json  # here: a job that saves no checkpoint does not pay for it at its start

            line = json.dumps(
                {
                    "at": time.time(),
                    "pid": os.getpid(),
                    "rank": self.rank,
                    "kind": kind,
                    "path": os.path.abspath(os.fspath(path)),
                    "step": n,
                }
            )
            fd = os.open(
                os.path.join(self.directory, "checkpoints.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644
            )
            try:
                os.write(fd, (line + "\n").encode())  # one write of one short line: appends never interleave
            finally:
                os.close(fd)
        except Exception:  # noqa: BLE001, S110 - a record is a nicety; never break the job
            pass

    def leave(self) -> None:
        """The innermost phase ends."""
        if self.mm is None:
            return
        if self.phases:
            self.phases.pop()
        if self.phases:
            name, deadline, started = self.phases[-1]
            PHASE.pack_into(self.mm, PHASE_OFFSET, deadline, started, name.encode()[:NAME_SIZE])
        else:
            PHASE.pack_into(self.mm, PHASE_OFFSET, 0.0, 0.0, b"")
        self.beat()


def _dist_rank() -> int:
    dist: Any = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:  # noqa: BLE001, S110 - no rank known is a fine answer
        pass
    return -1
