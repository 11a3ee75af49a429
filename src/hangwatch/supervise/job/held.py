"""The reader of hangwatch's own output holds the job: a pager at its prompt (``hangwatch run ... | less``), a terminal
paused by Ctrl-S. The pumps pass the job's output on byte for byte, so while that reader does not read, the job's
output backs up and the job waits to write, as it would without hangwatch. That time is the reader's, not the job's:
like a pause of the machine, it is not judged as a stall (the run loop moves the stall clocks on by it), and a hold
that lasts is said once, with who holds it.

Measured each round, not assumed: the pass-through has waited on its write for HELD_MIN_S at least, the job's side of
that output is at least half full (launch.py ``output_held``), and the stream is not a file (a slow disk is no reader
that chooses not to read). One hold is credited for --max-slow at most: a reader that never reads again (a pager left
open) does not hide a job that hung meanwhile for longer than any slow job is given."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from hangwatch.records.run import EventKind
from hangwatch.records.values import mutable

if TYPE_CHECKING:
    from hangwatch.supervise.attempt import Attempt
    from hangwatch.supervise.context import RunContext

SAY_AFTER_S = 10.0  # a hold this long is said (shorter ones are a slow terminal's ordinary pace)


@mutable
class OutputHold:
    """One attempt's account of the holds."""

    at: float | None = None  # the clock at the last round
    run: float = 0.0  # seconds credited to the hold going on (0: none)
    said: bool = False  # a hold was said (once an attempt)
    holding: bool = False  # the job is held now

    def take(self, now: float, held: bool, paused: float, cap_s: float) -> float:
        """The seconds since the last round to move out of the stall clocks: all of them while the job is ``held``,
        less ``paused`` (a pause of the machine this round, already moved), up to ``cap_s`` for one hold."""
        gap = 0.0 if self.at is None else max(0.0, now - self.at - paused)
        self.at, self.holding = now, held
        if not held:
            self.run = 0.0
            return 0.0
        gap = max(0.0, min(gap, cap_s - self.run))
        self.run += gap
        return gap


def reader_of(fd: int) -> str:
    """Who reads hangwatch's ``fd``, in words: a terminal, or the processes holding a pipe's read end."""
    try:
        st = os.fstat(fd)
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"the reader of hangwatch's fd {fd}"
    if stat.S_ISCHR(st.st_mode):
        return f"the terminal {target} (paused by Ctrl-S? Ctrl-Q resumes it)"
    if target.startswith("pipe:["):
        from hangwatch.capture import pipes, proc  # once a hold lasts: a run that is never held does not load them

        found, _ = pipes.pipe_holders(target, [], write=False)
        names = [f"pid {p} ({' '.join(proc.read_cmdline(p))[:60] or '?'})" for p in found if p != os.getpid()]
        if names:
            return "the reader of hangwatch's output, " + ", ".join(names[:3])
    return f"the reader of hangwatch's output ({target})"


def same_stream(a: int, b: int) -> bool:
    """Whether fds ``a`` and ``b`` are one file (a terminal that holds stdout holds stderr too)."""
    try:
        sa, sb = os.fstat(a), os.fstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def account_hold(ctx: RunContext, a: Attempt, now: float, paused: float) -> float:
    """The seconds the reader of hangwatch's output held the job since the last round (they leave the stall clocks); a
    hold that lasts is written down and said, once (not on the stream it holds: a held terminal would hold the loop).
    At the end of a hold, the kernel's stillness is read anew: the job was still because it was held."""
    fd = a.job.output_held()
    was = a.held.holding
    held = a.held.take(now, fd is not None, paused, ctx.cfg.max_slow)
    if was and not a.held.holding:
        a.still.forget()
    if fd is not None and a.held.run >= SAY_AFTER_S and not a.held.said:
        a.held.said = True
        by = reader_of(fd)
        ctx.rundir.event(EventKind.PAUSE, attempt=a.number, seconds=round(a.held.run, 1), held_by=by)
        if not same_stream(fd, 2):
            ctx.say(
                f"hangwatch: the job waits to write its output: {by} has not read it for {a.held.run:.0f} s "
                f"(every byte is kept in output.log); the stall clocks wait with it, for --max-slow at most."
            )
    return held
