"""The reader of hangwatch's own output holds the job: a pager at its prompt (``hangwatch run ... | less``), a terminal
paused by Ctrl-S, a ``| tee`` on a slow disk. The pumps pass the job's output on byte for byte, so while that reader
does not read, the job waits to write, its output pipe full, as it would without hangwatch. That time is the reader's,
not the job's: like a pause of the machine, it is not judged as a stall (supervisor.py moves the stall clocks on by
it), and a hold that lasts is said once, with who holds it."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hangwatch.records.run import EventKind

if TYPE_CHECKING:
    from hangwatch.supervise.attempt import Attempt
    from hangwatch.supervise.context import RunContext

SAY_AFTER_S = 10.0  # a hold this long is said (shorter ones are a slow terminal's ordinary pace)


@dataclass
class OutputHold:
    """One attempt's account of the holds."""

    counted: float = 0.0  # seconds of holds already moved out of the stall clocks
    said: bool = False  # the current hold was said
    holding: bool = False  # the pass-through waits for its reader now

    def take(self, total: float, current: float) -> tuple[float, bool]:
        """The seconds held since the last round (``total``: in all; ``current``: the hold going on, 0 when none),
        and whether the current hold is to be said now."""
        gap, self.counted, self.holding = max(0.0, total - self.counted), max(self.counted, total), current > 0
        say = current >= SAY_AFTER_S and not self.said
        self.said = (self.said and self.holding) or say
        return gap, say


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


def account_hold(ctx: RunContext, a: Attempt) -> float:
    """The seconds the reader of hangwatch's output held the job since the last round (they leave the stall clocks); a
    hold that lasts is written down and said, once (not on the stream it holds: a held terminal would hold the loop)."""
    total, current, fd = a.job.output_held()
    held, say = a.held.take(total, current)
    if held > 0:
        a.still.forget()
    if say:
        by = reader_of(fd)
        ctx.rundir.event(EventKind.PAUSE, attempt=a.number, seconds=round(current, 1), held_by=by)
        if not same_stream(fd, 2):
            ctx.say(
                f"hangwatch: the job waits to write its output: {by} has not read it for {current:.0f} s "
                "(every byte is kept in output.log); the stall clocks wait with it."
            )
    return held
