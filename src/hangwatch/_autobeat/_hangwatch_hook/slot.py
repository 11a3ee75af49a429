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
WRITE_EVERY = 0.01  # seconds: the time of a step or a batch is written to the slot at most this often
_monotonic = time.monotonic


class _Beats:
    """This process's slot, opened on the first beat (a forked child opens its own)."""

    def __init__(self, directory: str, phase_timeout: float) -> None:
        self.directory = directory
        self.phase_timeout = phase_timeout
        self.reset()

    def reset(self) -> None:
        """Forget the slot (after fork: the child opens its own on its first beat)."""
        _keep_inherited(getattr(self, "flight", None))
        self.mm: mmap.mmap | None = None
        self.counts: memoryview | None = None  # the slot's step and count, as two int64 (on a little-endian host)
        self.failed = False
        self.count = 0
        self.rank = -1
        self.rank_check_at = 0.0
        self.step_write_at = 0.0  # the monotonic times before which a step's, a batch's time is not written
        self.tick_write_at = 0.0
        self.total = 0  # the trainer's max steps, when it is known
        self.offset = 0  # the trainer's global step at its start (a run resumed from a checkpoint)
        self.optimizer = 0  # id() of the optimizer that stepped last, and its steps
        self.steps = 0
        self.most = 0  # the most steps of any other optimizer (a GAN steps two)
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
                if sys.byteorder == "little":
                    self.counts = memoryview(self.mm)[BEAT_OFFSET + 8 : BEAT_OFFSET + 24].cast("q")
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
        if n > 0 and not self.optimizer:
            self.offset = n

    @property
    def step(self) -> int:
        """The global step: the most steps any optimizer took, from the trainer's start; -1 before the first."""
        return self.offset + max(self.steps, self.most) if self.optimizer else -1

    def beat(self) -> None:
        """One beat, written at once: the time, the step, the count."""
        self.count += 1
        self._write()

    def tick(self) -> None:
        """A batch: counted at once, the time written at most once every WRITE_EVERY seconds (as a step's)."""
        self.count += 1
        now = _monotonic()
        counts = self.counts
        if counts is None or now >= self.tick_write_at:
            self.tick_write_at = now + WRITE_EVERY
            self._write()
        else:
            counts[1] = self.count

    def optimizer_step(self, optimizer: object, args: object = None, kwargs: object = None) -> None:
        """The global optimizer step post-hook, run at every step: the step and the count stored in place, one
        monotonic clock read; the time written with them at most once every WRITE_EVERY seconds, so the slot's
        time trails the last step by 10 ms at most. Run cold after torch's own step, a wall clock read and a whole
        struct written at every step cost 5.8-6.7 us a step more than an empty hook (0.8 % of a 0.8 ms step); this,
        2.5-2.8 us (``bench/overhead.py --hook``)."""
        if id(optimizer) == self.optimizer:
            self.steps += 1
        else:
            self._switch(optimizer)
        self.count += 1
        now = _monotonic()
        counts = self.counts
        if counts is None or now >= self.step_write_at:
            self.step_write_at = now + WRITE_EVERY
            self._write()
        else:
            n = self.steps
            counts[0] = self.offset + (n if n > self.most else self.most)
            counts[1] = self.count

    def _switch(self, optimizer: object) -> None:
        """Another optimizer steps than the last one (or the first steps)."""
        if self.optimizer:
            self.per_optimizer[self.optimizer] = self.steps
            self.most = max(self.most, self.steps)
        self.optimizer = id(optimizer)
        self.steps = self.per_optimizer.get(self.optimizer, 0) + 1

    def _write(self) -> None:
        mm = self.mm if self.mm is not None else self._open()
        if mm is None:
            return
        if self.rank < 0 and self.optimizer and _monotonic() >= self.rank_check_at:
            # mp.spawn ranks learn their rank at init_process_group: asked again once a second, not at every step
            self.rank_check_at = _monotonic() + 1.0
            self._header()
        BEAT.pack_into(mm, BEAT_OFFSET, time.time(), self.step, self.count)

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


def _keep_inherited(server: Any) -> None:
    """A rank's flight-recorder server object that a forked child inherited (a Pool or DataLoader worker forked
    after init_process_group) is never destroyed in that child: its destructor shuts the server down, and the
    listening socket it closes is the parent's own (shared across fork): the rank's server thread then fails ("failed
    to listen") and aborts the rank. One reference is kept for good; the child has none of its threads to stop."""
    if server is None or isinstance(server, str):  # none, or a FIFO's path: nothing shared to shut
        return
    from .flight import _kept_past_exit  # (loaded already: it made the server)

    _kept_past_exit(server)
