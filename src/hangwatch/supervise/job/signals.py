"""Signals to hangwatch: handlers that only note the signal and wake the loop; the loop then passes the
first Ctrl-C to the job, and stops the job (SIGTERM, grace, SIGKILL) on a second one, SIGTERM or SIGHUP."""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from hangwatch.records.run import EventKind
from hangwatch.recover.exitcode import ExitReason, ExitStatus, job_exit
from hangwatch.supervise.attempt import Attempt, AttemptEnd, EndJob
from hangwatch.supervise.context import RunContext

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class SignalInbox:
    """The signals hangwatch got, in order, for the loop to handle between rounds."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.pending: list[int] = []
        self._interrupts = 0

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.pending.append(signum)
        self.ctx.signalled.set()
        self.ctx.wake.set()

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """The handlers, for the duration of the run (none off the main thread: tests drive the loop there)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        old = {s: signal.signal(s, self._on_signal) for s in HANDLED}
        try:
            yield
        finally:
            for s, h in old.items():
                signal.signal(s, h)

    def handle(self, a: Attempt) -> AttemptEnd | EndJob | None:
        """Act on the signals that came since the last round; how the attempt ended, if it did."""
        ctx = self.ctx
        while self.pending:
            signum = self.pending.pop(0)
            if not a.job.owned:
                return self._detach(a, signum)
            if signum == signal.SIGINT and self._interrupts == 0:
                self._interrupts = 1
                ctx.rundir.event(EventKind.SIGNAL, signal="SIGINT", forwarded=True)
                a.job.forward(signal.SIGINT)
                ctx.say(
                    "hangwatch: Ctrl-C passed to the job; press it again to stop the job "
                    f"(SIGTERM, then SIGKILL after {ctx.cfg.kill_grace:.0f} s)."
                )
                continue
            name = signal.Signals(signum).name
            ctx.rundir.event(EventKind.SIGNAL, signal=name, forwarded=False, stopping=True)
            ctx.say(f"hangwatch: {name}: stopping the job (SIGTERM, then SIGKILL after {ctx.cfg.kill_grace:.0f} s).")
            return EndJob(f"hangwatch got {name}", functools.partial(_stopped, signum))
        return None

    def _detach(self, a: Attempt, signum: int) -> AttemptEnd:
        """A job hangwatch attached to is not its to stop: any of the signals ends the watch, and the job runs on."""
        name = signal.Signals(signum).name
        self.ctx.rundir.event(EventKind.SIGNAL, signal=name, forwarded=False, stopping=False, detached=True)
        self.ctx.say(f"hangwatch: {name}: detached from pid {a.job.pid}; the job runs on, untouched.")
        return AttemptEnd(0, None, ExitStatus(0, ExitReason.SIGNAL, "hangwatch was told to stop and detached"))


def _stopped(signum: int, code: int | None) -> AttemptEnd:
    """How an attempt hangwatch stopped on signal ``signum`` ends: as its job did (``code``, None if unknown)."""
    status = 128 - code if code is not None and code < 0 else (code if code is not None else 128 + signum)
    return AttemptEnd(status, None, job_exit(status, signalled=True))
