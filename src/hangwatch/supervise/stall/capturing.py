"""Capturing a job for the run loop: the evidence with the job's output tail and kernel log added, in a
thread with a deadline (a capture that never returns is abandoned, never awaited)."""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import TYPE_CHECKING

from hangwatch.errors import CaptureError
from hangwatch.records.run import EventKind
from hangwatch.redact import redact_text
from hangwatch.supervise.attempt import Capture
from hangwatch.supervise.context import RunContext

if TYPE_CHECKING:
    from hangwatch.capture.kmsg import KmsgCursor
    from hangwatch.records.evidence import Evidence, VanishedProcess
    from hangwatch.records.gpu import KernelEvent
    from hangwatch.recover.terminate import Gone

log = logging.getLogger(__name__)

OUTPUT_TAIL_BYTES = 64 * 1024
PROMPT_TAIL_BYTES = 4096  # of the job's output, into the evidence: the prompt a job waits at, a feeder's traceback
CAPTURE_SLACK_S = 60.0  # beyond the window, how long a capture may take before it is abandoned


def vanished(gone: list[Gone], kernel: tuple[KernelEvent, ...]) -> tuple[VanishedProcess, ...]:
    """The job's processes that went away, as evidence: with why when the kernel log names them (OOM)."""
    from hangwatch.capture.proc import started_at
    from hangwatch.records.evidence import VanishedProcess

    oom = {k.pid for k in kernel if k.kind == "oom_kill" and k.pid is not None}
    return tuple(
        VanishedProcess(
            pid=g.who.pid,
            ppid=g.who.ppid,
            name=g.who.comm,
            cmdline=g.who.cmdline,
            started_at=started_at(g.who.started) or 0.0,
            gone_at=g.at,
            replaced_by=g.replaced_by,
            reason="killed by the OOM killer (kernel log)" if g.who.pid in oom else None,
        )
        for g in gone
    )


class Capturer:
    """Captures the current attempt's job; ``capture`` is injectable (tests script the evidence)."""

    def __init__(self, ctx: RunContext, capture: Capture | None = None) -> None:
        self.ctx = ctx
        self.capture: Capture = capture or self._capture_real
        self.kmsg: KmsgCursor | None = None  # the kernel log since the current attempt's launch
        self._abandoned: threading.Thread | None = None  # a capture that never returned

    def window(self) -> float:
        """Seconds a capture samples stacks for: --capture-window, else a quarter of --min-stall (1-5 s)."""
        if self.ctx.cfg.capture_window is not None:
            return self.ctx.cfg.capture_window
        return min(5.0, max(1.0, self.ctx.cfg.min_stall / 4))

    def open_kmsg(self) -> None:
        """The kernel log from this launch on (an earlier attempt's lines, such as the Xid 45 of its
        kill, are not this attempt's)."""
        from hangwatch.capture.kmsg import KmsgCursor

        if self.kmsg is not None:
            self.kmsg.close()
        self.kmsg = KmsgCursor()

    def close(self) -> None:
        """The kernel log cursor."""
        if self.kmsg is not None:
            self.kmsg.close()

    def _capture_real(self, pid: int, window: float) -> Evidence:
        from hangwatch.capture import capture_job

        ev = capture_job(pid, window, native=True if self.ctx.cfg.native else None, kernel=False)
        a = self.ctx.attempts[-1] if self.ctx.attempts else None
        notes = ev.notes + ((self.kmsg.note,) if self.kmsg is not None and self.kmsg.note else ())
        if a is not None:  # the job's output goes through hangwatch, not to a file capture could read
            tail = self.output_tail(a.log_offset)[-PROMPT_TAIL_BYTES:]
            ev = dataclasses.replace(
                ev,
                processes=tuple(
                    dataclasses.replace(p, output_tail=tail) if p.info.pid == pid and p.output_tail is None else p
                    for p in ev.processes
                ),
            )
        from hangwatch.capture.kernel import read_cursor

        kernel = read_cursor(self.kmsg) if self.kmsg is not None else ()
        return dataclasses.replace(
            ev,
            kernel=kernel,
            notes=notes,
            known_pids=tuple(a.job.known_pids()) if a is not None else (),
            vanished=vanished(a.job.vanished(), kernel) if a is not None else (),
            timer_bound_s=self.ctx.cfg.max_slow,
        )

    def bounded(self, pid: int, window: float | None = None) -> Evidence:
        """The capture, in a thread with a deadline: one that never returns (a frozen py-spy on a
        process with many native threads, a /proc read stuck in the kernel) is abandoned, never awaited.
        ``window``: seconds to sample (default: ``window()``)."""
        window = self.window() if window is None else window
        box: dict[str, object] = {}

        def work() -> None:
            try:
                box["evidence"] = self.capture(pid, window)
            except CaptureError as e:
                box["error"] = e
            except Exception as e:  # a capture bug is a failed capture, not a failed loop (written down below)
                log.exception("capture failed")
                box["bug"] = e

        if self._abandoned is not None and self._abandoned.is_alive():
            raise CaptureError(f"an earlier capture of pid {pid} is still stuck", "Not starting another")
        with self.ctx.busy(f"capturing pid {pid}"):
            t = threading.Thread(target=work, name="hangwatch-capture", daemon=True)
            t.start()
            t.join(window + CAPTURE_SLACK_S)
        if t.is_alive():
            self._abandoned = t
            self.ctx.rundir.event(EventKind.CAPTURE_ABANDONED, pid=pid, seconds=round(window + CAPTURE_SLACK_S, 1))
            raise CaptureError(f"the capture of pid {pid} did not return", "It was abandoned; supervision goes on")
        bug = box.get("bug")
        if isinstance(bug, Exception):  # written down here, in the loop's thread, not in the capture's
            self.ctx.rundir.event(EventKind.INTERNAL_ERROR, error=f"{type(bug).__name__}: {bug}", doing="capture")
            raise CaptureError(
                f"the capture of pid {pid} failed ({type(bug).__name__}: {bug})",
                "Supervision goes on; report it with the run's events.jsonl",
            )
        if "error" in box:
            raise box["error"]  # type: ignore[misc]
        return box["evidence"]  # type: ignore[return-value]

    def look(self, pid: int, window: float | None = None) -> Evidence | CaptureError:
        """The capture (``bounded``), or why it could not be taken, as a value: never raised. Every look that fails
        is written down here and nowhere else (`capture_failed`, with what happened and what is done; a capture
        bug is also an `internal_error`, one that never returned a `capture_abandoned`)."""
        try:
            return self.bounded(pid, window)
        except CaptureError as e:
            self.ctx.rundir.event(EventKind.CAPTURE_FAILED, pid=pid, error=e.message, then=e.fix)
            return e

    def output_tail(self, since: int) -> str:
        """The end of this attempt's output (from byte ``since`` of output.log on), redacted."""
        return redact_text(self.ctx.output.tail(since, OUTPUT_TAIL_BYTES).decode(errors="replace"))
