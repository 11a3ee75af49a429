"""The run loop: one attempt at a time, one explicit state machine per attempt.

Each round of ``_step`` reads signals, the job's exit, progress and the other nodes, then calls the
handler of the current ``RunState``:

    starting/progressing --threshold passes--> suspect
    suspect --capture: alive/slow--> (extended) progressing      suspect --capture: hung--> hung
    hung --progress--> progressing (recovered)                   hung + kill/restart: the attempt ends
    job exits by itself: finished, or crashed (incident, and a restart if asked)

Signals become flags the loop reads; the job is always ended in ``finally``. The clock, the launcher
and the capture are injectable, so the loop is tested on scripted jobs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from hangwatch.atomic import write_text_atomic
from hangwatch.capture.cgroup import cgroup_oom_kills
from hangwatch.errors import CaptureError
from hangwatch.incident import Action, Finding, Incident, LastProgress, Verdict
from hangwatch.records.run import CaptureRequest, Decision, EventKind, RunState, RunSummary
from hangwatch.recover.exitcode import (
    EXIT_HUNG_REQUEUE,
    EXIT_STOPPED,
    EXIT_SUPERVISION_FAILED,
    ExitReason,
    ExitStatus,
    Hang,
    earlier_hangs,
    hung_exit,
    job_exit,
    stopped_exit,
)
from hangwatch.recover.fallback import apply_fallback, command_for_attempt
from hangwatch.recover.remedy import RemedyPlan, ladder
from hangwatch.recover.restart import RestartPolicy
from hangwatch.recover.terminate import Termination
from hangwatch.redact import redact_argv, redact_text
from hangwatch.report.banner import incident_banner, notification, status_line
from hangwatch.runs.index import register
from hangwatch.supervise.accounting import Ledger, attempt_stats, remedy_outcomes, step_rate
from hangwatch.supervise.attempt import Attempt, AttemptEnd, Capture, Clock, SupervisionFailed, SystemClock
from hangwatch.supervise.autobeat import autobeat_env
from hangwatch.supervise.budget import BudgetWatch
from hangwatch.supervise.checkpoints import (
    Checkpoint,
    CheckpointLog,
    fill,
    fill_args,
    redone_steps,
    save_step,
    uses_checkpoint,
)
from hangwatch.supervise.config import OnHang, RunConfig
from hangwatch.supervise.deadline import HOLD_S, DeadlineWatch
from hangwatch.supervise.detector import DetectorConfig, HistoryBound, Progress, StallDetector, State, Strength
from hangwatch.supervise.gpu_release import GpuGuard
from hangwatch.supervise.intake import ProgressIntake
from hangwatch.supervise.job import Job, LaunchedJob, Launcher
from hangwatch.supervise.launch import OnChunk, OutputLog, StatusLine, launch
from hangwatch.supervise.notify import Notifier
from hangwatch.supervise.rundir import RunDir, command_name

if TYPE_CHECKING:
    from hangwatch.capture.kmsg import KmsgCursor
    from hangwatch.diagnose import Diagnosis
    from hangwatch.evidence import Evidence
    from hangwatch.supervise.metrics import Metrics
    from hangwatch.supervise.nodes import NodeCoordination

# Capture, diagnosis and node coordination are imported where they are first needed: a job that
# never stalls does not pay for them when hangwatch starts (`hangwatch run -- true` in ~0.2 s).

log = logging.getLogger(__name__)

POLL_S = 0.25
SLOW_INCIDENT_STALLS = 3  # extended past this many x --min-stall: a `slow` incident, once per cause and place
COORD_EVERY_S = 0.5
SCAN_EVERY_S = 2.0
PAGE_AFTER_S = 60.0  # a clean run shorter than this gets no report.html at its end (`report --html` makes one)
SUMMARY_EVERY_S = 2.0  # `hangwatch ls` and `watch` read it: their news is at most this old
PROGRESS_EVENT_EVERY_S = 10.0
STATUS_EVERY_S = 1.0
OUTPUT_TAIL_BYTES = 64 * 1024
PROMPT_TAIL_BYTES = 4096  # of the job's output, into the evidence: the prompt a job waits at, a feeder's traceback
MAX_INTERNAL_ERRORS = 5  # rounds in a row that fail before supervision gives up (and ends the job)
WATCHDOG_S = float(os.environ.get("HANGWATCH_WATCHDOG_S", "60"))  # a round slower than this is reported
CAPTURE_SLACK_S = 60.0  # beyond the window, how long a capture may take before it is abandoned


class Supervisor:
    """Supervises one run: its attempts, their stalls, incidents and accounting."""

    def __init__(self, cfg: RunConfig, env: dict[str, str] | None = None, *, clock: Clock | None = None,
                 launcher: Launcher | None = None, capture: Capture | None = None) -> None:
        self.cfg = cfg
        self.base_env = dict(os.environ if env is None else env)
        self.clock: Clock = clock or SystemClock()
        self.capture: Capture = capture or self._capture_real
        self.notifier = Notifier(list(cfg.notify))  # validates the URLs before anything is created
        self.incident_counts: Counter[tuple[str, str]] = Counter()  # (cause, verdict) -> incidents, for metrics
        self.rundir = RunDir(cfg.run_dir)
        self.status = StatusLine(enabled=sys.stderr.isatty())
        self.metrics = self._metrics() if cfg.metrics_port is not None or cfg.metrics_textfile else None
        self.intake = ProgressIntake(cfg.progress_regex, self.rundir.heartbeat_dir)
        self.checkpoints: list[Checkpoint] = []  # what the job saved, oldest first (autobeat records them)
        self.checkpoint_log = CheckpointLog(self.rundir.heartbeat_dir / "checkpoints.jsonl")
        self._checkpoints_read: list[dict[str, object]] = []
        self._known_rate: float | None = None  # the newest step rate and total a summary had (for remedy choice)
        self._known_total: int | None = None
        self.ledger = Ledger(self.clock.now(), cfg.cost_per_hour)
        self.policy = RestartPolicy(cfg.max_restarts)
        self.attempts: list[Attempt] = []
        self.exit_code: int | None = None
        self.final_state: RunState | None = None  # set once the run has ended
        self.exit_status: ExitStatus | None = None  # why the run ended (the exit-code contract)
        self.hangs: list[Hang] = earlier_hangs(cfg.run_dir)  # a requeued run's earlier hangs count
        self.nodes: NodeCoordination | None = None
        self.remedies = RemedyPlan(custom=dict(cfg.remedies))
        # A projection is noisy: --on-over-budget stop waits until it has stayed over for --min-stall.
        self.kmsg: KmsgCursor | None = None  # the kernel log since the current attempt's launch
        self.gpu = GpuGuard(cfg.gpu_release_timeout, cfg.relaunch_on_held_gpu, self.rundir.event, self._stderr)
        self.budget = (BudgetWatch(cfg.budget, cfg.stop_over_budget, hold_s=cfg.min_stall)
                       if cfg.budget is not None else None)
        # Like the budget: a projection is noisy, so a crossing counts once it has held for --min-stall (<= 30 s).
        self.deadline_watch = (DeadlineWatch(cfg.deadline, hold_s=min(HOLD_S, cfg.min_stall))
                               if cfg.deadline is not None else None)
        self.probe_note: str | None = None  # the newest startup probe's finding, for the status line
        self.note: str | None = None  # alive or waiting without progress: what, and until when (status, ls, watch)
        self._signals: list[int] = []
        self._interrupts = 0
        self._wake = threading.Event()
        self._last: dict[str, float] = {}  # periodic chores: name -> last done
        self._log_file = self.rundir.open_output_log()
        self.output = OutputLog(self._log_file)
        self.launcher: Launcher = launcher or self._launch_real
        self._round_at = time.monotonic()  # when the loop last finished a round (the watchdog reads it)
        self._doing = "starting"  # what the loop is doing now, for the watchdog's event
        self._watchdog_stop = threading.Event()
        self._abandoned: threading.Thread | None = None  # a capture that never returned
        self._handlers: dict[State, Callable[[Attempt, float], AttemptEnd | None]] = {
            State.STARTING: self._on_waiting,
            State.PROGRESSING: self._on_waiting,
            State.SUSPECT: self._on_suspect,
            State.HUNG: self._on_hung,
        }

    @property
    def state(self) -> RunState:
        """The run's state: the current attempt's detector state until the run ends."""
        if self.final_state is not None:
            return self.final_state
        return RunState(self.attempts[-1].detector.state.value) if self.attempts else RunState.STARTING

    # --- signals ------------------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signals.append(signum)
        self._wake.set()

    @contextlib.contextmanager
    def _signal_handlers(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # tests drive the loop from a worker thread: no handlers there
            return
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            yield
        finally:
            for s, h in old.items():
                signal.signal(s, h)

    def _stderr(self, text: str) -> None:
        self.status.clear()
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()

    # --- the run -----------------------------------------------------------------------------------------
    def run(self) -> int:
        """Run attempts until the job ends, is stopped, or restarts are over; the exit status."""
        self.rundir.event(EventKind.START, command=redact_argv(self.cfg.argv), run_dir=str(self.cfg.run_dir),
                          on_hang=self.cfg.on_hang.value, min_stall=self.cfg.min_stall,
                          startup_grace=self.cfg.startup_grace)
        register(self.cfg.run_dir)  # the per-user index `hangwatch ls` reads
        self._write_summary(final=False)  # at once: `hangwatch ls` tells a live run by the pid in it
        watchdog = threading.Thread(target=self._watchdog, name="hangwatch-watchdog", daemon=True)
        watchdog.start()
        with self._signal_handlers():
            try:
                if self.cfg.topology is not None:
                    self._connect()
                self.exit_code = self._run_attempts()
            except SupervisionFailed as e:
                self.exit_code = EXIT_SUPERVISION_FAILED
                self.exit_status = ExitStatus(EXIT_SUPERVISION_FAILED, ExitReason.SUPERVISION_FAILED, e.message)
                raise
            finally:
                for a in self.attempts:
                    if a.job.poll() is None:  # never leave the job running unseen
                        self._terminate(a, reason="hangwatch exiting")
                    a.job.close()
                self._watchdog_stop.set()
                watchdog.join(timeout=2)
                self.output.flush()
                self.notifier.flush()
                if self.nodes is not None:
                    self.rundir.event(EventKind.COORD_STATS, node=self.nodes.node, **self.nodes.coord.stats.to_dict())
                st = self.exit_status
                self.rundir.event(EventKind.EXIT, exit_code=self.exit_code, exit_reason=st.reason.value if st else None,
                                  why=st.why if st else None, requeue=st.requeue if st else None)
                if st is not None and st.reason not in (ExitReason.FINISHED, ExitReason.CRASHED, ExitReason.SIGNAL):
                    self._stderr(f"hangwatch: exit {st.code} ({st.reason.label}): {st.why}.")
                self._write_summary(final=True)
                self.rundir.close()
                if self.metrics is not None:
                    self.metrics.close()
                if self.kmsg is not None:
                    self.kmsg.close()
                if self.ledger.incidents or len(self.attempts) > 1 or \
                        self.clock.now() - self.ledger.started_at >= PAGE_AFTER_S:
                    self._write_page()
                self._log_file.close()
        return self.exit_code if self.exit_code is not None else 1

    def _metrics(self) -> Metrics:
        """--metrics-port / --metrics-textfile, checked (port free, library there) before anything starts."""
        from hangwatch.supervise.metrics import Metrics

        topo = self.cfg.topology
        m = Metrics(self.cfg.metrics_port, self.cfg.metrics_textfile, self.cfg.run_label or self.cfg.run_dir.name,
                    str(topo.node_rank) if topo is not None else "0", os.uname().nodename,
                    command_name(self.cfg.argv))
        if m.port is not None:
            self._stderr(f"hangwatch: metrics at http://{os.uname().nodename}:{m.port}/metrics")
        return m

    def _connect(self) -> None:
        topo = self.cfg.topology
        assert topo is not None  # noqa: S101 - only called for a multi-node job
        timeout = max(30.0, min(self.cfg.startup_grace, 600.0))
        self._stderr(f"hangwatch: node {topo.node_rank} of {topo.nnodes}; coordinating through {topo.endpoint}")
        from hangwatch.supervise.nodes import NodeCoordination

        self.nodes = NodeCoordination.connect(topo, timeout)
        self.rundir.event(EventKind.COORDINATION, node=topo.node_rank, nnodes=topo.nnodes, endpoint=topo.endpoint)

    def _run_attempts(self) -> int:
        while True:
            attempt = self._launch(len(self.attempts) + 1)
            try:
                end = self._watch(attempt)
            finally:
                attempt.ended_at = self.clock.now()
                self._flush_checkpoints(attempt)
                if attempt.job.poll() is not None:
                    attempt.job.close()
            attempt.exit_code = end.code
            self.exit_status = end.status or job_exit(end.code)
            if end.restart is None or end.restart.restart:
                if end.restart is None:
                    return end.code
                self._doing = "waiting for the GPU memory of the ended job"
                released = self.gpu.released(attempt.number, attempt.job.known_pids())
                self._doing = "watching"
                if self._signals:  # Ctrl-C or SIGTERM during the wait: stop here, launch nothing
                    self.final_state = RunState.STOPPED
                    self.exit_status = job_exit(end.code, signalled=True)
                    return end.code
                if not released:
                    self.final_state = None if self.exit_status.reason in (
                        ExitReason.HUNG_REQUEUE, ExitReason.HUNG_FINAL) else RunState.CRASHED
                    return end.code
                continue
            msg = end.restart.message(self.cfg.max_restarts)
            if msg is not None:
                self._stderr(f"hangwatch: {msg}")
                self.rundir.event(EventKind.GIVE_UP, reason=end.restart.give_up, attempts=attempt.number)
            return end.code

    def _open_kmsg(self) -> None:
        """The kernel log from this launch on (an earlier attempt's lines, such as the Xid 45 of its
        kill, are not this attempt's)."""
        from hangwatch.capture.kmsg import KmsgCursor

        if self.kmsg is not None:
            self.kmsg.close()
        self.kmsg = KmsgCursor()

    def _capture_real(self, pid: int, window: float) -> Evidence:
        from hangwatch.capture import capture_job

        ev = capture_job(pid, window, native=True if self.cfg.native else None, kernel=False)
        a = self.attempts[-1] if self.attempts else None
        notes = ev.notes + ((self.kmsg.note,) if self.kmsg is not None and self.kmsg.note else ())
        if a is not None:  # the job's output goes through hangwatch, not to a file capture could read
            tail = self._output_tail(a.log_offset)[-PROMPT_TAIL_BYTES:]
            ev = dataclasses.replace(ev, processes=tuple(
                dataclasses.replace(p, output_tail=tail) if p.info.pid == pid and p.output_tail is None else p
                for p in ev.processes))
        return dataclasses.replace(ev, kernel=self.kmsg.read() if self.kmsg is not None else (), notes=notes,
                                   known_pids=tuple(a.job.known_pids()) if a is not None else ())

    def _launch_real(self, argv: list[str], env: dict[str, str], on_chunk: OnChunk) -> Job:
        return LaunchedJob(launch(argv, env, None, self.output, on_chunk, self.status, self.cfg.use_pty,
                                  on_close=self._wake.set), self.cfg.kill_grace)

    def _launch(self, n: int) -> Attempt:
        ckpt = self.checkpoints[-1] if self.checkpoints else None
        argv = command_for_attempt(self.cfg.argv, [fill_args(f.args, ckpt) for f in self.cfg.fallbacks], n)
        env = dict(self.base_env)
        given = ckpt is not None and any(uses_checkpoint(f.args) or any(map(uses_checkpoint, f.env.values()))
                                         for f in self.cfg.fallbacks[: max(0, n - 1)])
        for fb in self.cfg.fallbacks[: max(0, n - 1)]:
            env.update({k: v for k, v in ((k, fill(v, ckpt)) for k, v in fb.env.items()) if v is not None})
        if n > 1 and self.cfg.resume_arg:
            given = given or (ckpt is not None and uses_checkpoint(self.cfg.resume_arg))
            resume = fill_args(self.cfg.resume_arg, ckpt)
            argv = apply_fallback(argv, resume) if resume else argv
            self.rundir.event(EventKind.RESUME, attempt=n, applied=resume or None,
                              checkpoint=ckpt.to_dict() if ckpt else None)
            self._stderr(f"hangwatch: attempt {n} resumes from {ckpt.path} (step {ckpt.step})" if ckpt and resume
                         else f"hangwatch: attempt {n}: no checkpoint was seen, so --resume-arg is left out")
        env.update({"PYTHONUNBUFFERED": "1", "HANGWATCH_RUN_DIR": str(self.cfg.run_dir.resolve()),
                    "HANGWATCH_ATTEMPT": str(n), "HANGWATCH_HEARTBEAT_DIR": str(self.rundir.heartbeat_dir.resolve())})
        env.update(autobeat_env(env, self.cfg.autobeat, self.cfg.max_slow))
        env.update(self.remedies.env())
        for r in self.remedies.applied:
            if r.attempt == n:
                self.rundir.event(EventKind.REMEDY, attempt=n, remedy=r.remedy, applied=r.text, cause=r.cause)
                self._stderr(f"hangwatch: attempt {n} applies {r.text} (remedy for {r.cause})")
        self.intake.new_attempt()
        self.probe_note = self.note = None
        self.output.flush()
        log_offset = self._log_file.tell()
        self.gpu.setup()
        self._open_kmsg()
        job = self.launcher(argv, env, self.intake.on_chunk)
        now = self.clock.now()
        self._oom_start = cgroup_oom_kills(job.pid)  # per attempt: an earlier attempt's OOM is not this crash's
        det = StallDetector(DetectorConfig(min_stall=self.cfg.min_stall, startup_grace=self.cfg.startup_grace,
                                           max_slow=self.cfg.max_slow, history_factor=self.cfg.history_factor,
                                           history_floor=self.cfg.history_floor, phase_factor=self.cfg.phase_factor),
                            now)
        attempt = Attempt(n, argv, now, job, det, action=self.cfg.on_hang, next_probe_at=now + self.cfg.min_stall,
                          log_offset=log_offset, resumed_from=ckpt, resume_given=given)
        self.attempts.append(attempt)
        if n > 1:
            self.rundir.event(EventKind.RESTART, attempt=n, command=redact_argv(argv))
            self._stderr(f"hangwatch: restarting (attempt {n}): {' '.join(redact_argv(argv))}")
        self.rundir.event(EventKind.LAUNCH, attempt=n, pid=job.pid, command=redact_argv(argv))
        return attempt

    _oom_start: int | None = None

    # --- one attempt: the loop and its step ------------------------------------------------------------
    def _watchdog(self) -> None:
        """The loop's own liveness: a round that does not finish within WATCHDOG_S is written down
        (once per stall), with what the loop was doing; the loop itself bounds and abandons captures."""
        reported_for = 0.0
        while not self._watchdog_stop.wait(min(1.0, WATCHDOG_S / 2)):
            since = time.monotonic() - self._round_at
            if since >= WATCHDOG_S and reported_for != self._round_at:
                reported_for = self._round_at
                self.rundir.event(EventKind.WATCHDOG, seconds=round(since, 1), doing=self._doing)
                log.warning("supervision round has not finished for %.0f s (%s)", since, self._doing)

    def _capture_bounded(self, pid: int, window: float) -> Evidence:
        """The capture, in a thread with a deadline: one that never returns (a frozen py-spy on a
        process with many native threads, a /proc read stuck in the kernel) is abandoned, never awaited."""
        box: dict[str, object] = {}

        def work() -> None:
            try:
                box["evidence"] = self.capture(pid, window)
            except CaptureError as e:
                box["error"] = e
            except Exception as e:  # a capture bug is a failed capture, not a failed loop
                log.exception("capture failed")
                self.rundir.event(EventKind.INTERNAL_ERROR, error=f"{type(e).__name__}: {e}", doing="capture")
                box["error"] = CaptureError(f"the capture of pid {pid} failed ({type(e).__name__}: {e})",
                                            "Supervision goes on; report it with the run's events.jsonl")

        if self._abandoned is not None and self._abandoned.is_alive():
            raise CaptureError(f"an earlier capture of pid {pid} is still stuck", "Not starting another")
        self._doing = f"capturing pid {pid}"
        t = threading.Thread(target=work, name="hangwatch-capture", daemon=True)
        t.start()
        t.join(window + CAPTURE_SLACK_S)
        self._doing = "watching"
        if t.is_alive():
            self._abandoned = t
            self.rundir.event(EventKind.CAPTURE_ABANDONED, pid=pid, seconds=round(window + CAPTURE_SLACK_S, 1))
            raise CaptureError(f"the capture of pid {pid} did not return", "It was abandoned; supervision goes on")
        if "error" in box:
            raise box["error"]  # type: ignore[misc]
        return box["evidence"]  # type: ignore[return-value]

    def _watch(self, a: Attempt) -> AttemptEnd:
        failures = 0
        while True:
            try:
                end = self._step(a)
                self._round_at = time.monotonic()
                failures = 0
            except Exception as e:  # the loop boundary: log, record, go on
                failures += 1
                log.exception("supervision round failed")
                self.rundir.event(EventKind.INTERNAL_ERROR, attempt=a.number, error=f"{type(e).__name__}: {e}",
                                  in_a_row=failures)
                if failures >= MAX_INTERNAL_ERRORS:
                    raise SupervisionFailed(f"supervision failed {failures} times in a row ({type(e).__name__}: "
                                            f"{e}); the job was ended cleanly",
                                            "Report it with the run's events.jsonl, and run again") from e
                end = None
            if end is not None:
                return end
            self.clock.wait(self._wake, POLL_S)

    def _step(self, a: Attempt) -> AttemptEnd | None:
        """One round: signals, the job's exit, progress, other nodes, then the current state's handler."""
        end = self._handle_signals(a)
        if end is not None:
            return end
        code = a.job.poll()
        if code is not None:
            return self._job_exited(a, code)
        now = self.clock.now()
        self._take_progress(a)
        if now - a.last_scan >= SCAN_EVERY_S:
            a.job.scan()
            a.last_scan = now
        if self.nodes is not None and self._due("coord", now, COORD_EVERY_S):
            end = self._nodes_tick(a, now)
            if end is not None:
                return end
        end = self._handlers[a.detector.state](a, now)
        self._periodic(a, now)
        if end is None and self.budget is not None:
            end = self._budget_tick(a, self.budget, now)
        if end is None:
            self._deadline_tick(a, now)
        return end

    def _due(self, chore: str, now: float, every: float) -> bool:
        if now - self._last.get(chore, float("-inf")) < every:
            return False
        self._last[chore] = now
        return True

    # --- state handlers ---------------------------------------------------------------------------------
    def _on_waiting(self, a: Attempt, now: float) -> AttemptEnd | None:
        """starting / progressing: become suspect when the threshold passes; probe a job that has not
        shown progress yet every --min-stall seconds."""
        if a.detector.state == State.STARTING and now >= a.next_probe_at and \
                now < a.started_at + self.cfg.startup_grace:
            end = self._probe_startup(a, now)
            if end is not None or a.detector.state != State.STARTING:
                return end
        suspect = a.detector.check(now)
        while a.detector.handovers:
            was, now_signal, _ = a.detector.handovers.pop(0)
            self.rundir.event(EventKind.HANDOVER, attempt=a.number, signal_from=was.name.lower(),
                              signal_to=now_signal.name.lower(), reason="heartbeats stopped while the log counter "
                              "advanced")
        if suspect:
            return self._on_suspect(a, now)
        return None

    def _on_hung(self, a: Attempt, now: float) -> AttemptEnd | None:
        """hung and reported (the job was left running): progress brings it back, nothing else to do."""
        return None

    def _on_suspect(self, a: Attempt, now: float) -> AttemptEnd | None:
        """suspect: capture and diagnose; extend a job that is alive, else declare it hung and act."""
        det = a.detector
        stalled = det.stalled_for(now)
        self.rundir.event(EventKind.SUSPECT, attempt=a.number, stalled_seconds=round(stalled, 1),
                          threshold=round(det.threshold(), 1), phase=det.phase_name)
        if now < a.capture_retry_at:
            return None
        try:
            evidence = self._capture_bounded(a.job.pid, self._capture_window())
        except CaptureError:
            a.capture_retry_at = self.clock.now() + max(1.0, self._capture_window())  # retry, not every round
            return None  # or the job is gone: the next round sees its exit
        ranks = self.intake.rank_progress()
        if ranks:
            evidence = dataclasses.replace(evidence, rank_progress=ranks)
        diagnosis = _diagnose(evidence)
        if a.job.poll() is not None:
            return None
        if self.nodes is not None and a.captured_for_peer:  # answer the node that asked, alive or not
            self.nodes.share(a.number, evidence, diagnosis, self.clock.now(), request=False)
        moved = self._moved_during_capture(a)
        if moved is not None and (det.state != State.SUSPECT or det.extend(self.clock.now())):
            # Visible movement between suspect and decision: not hung. Output alone extends, within --max-slow.
            self.rundir.event(EventKind.EXTENDED, attempt=a.number, verdict=diagnosis.verdict.value,
                              cause=diagnosis.findings[0].cause, reason=moved, seconds=round(det.threshold(), 1))
            self._stderr(f"hangwatch: no progress for {stalled:.0f} s, but the job moved while it was captured "
                         f"({moved}); not hung.")
            return None
        if self.nodes is not None:
            merged = self.nodes.merge(a.number, evidence, diagnosis, self._capture_window(), self.clock.now())
            self.rundir.event(EventKind.NODES, attempt=a.number, reported=list(merged.reported), merged=merged.cause)
            diagnosis = merged.diagnosis
        root = diagnosis.findings[0]
        if diagnosis.verdict == Verdict.WAITING:
            return self._peers_late(a, evidence, diagnosis, now, stalled)
        if diagnosis.verdict in (Verdict.SLOW, Verdict.PROGRESSING):
            from hangwatch.diagnose.bounds import bounded_by_history, past_history, workers_behind

            bound = det.history_bound(workers_behind(evidence, root)) if bounded_by_history(root) else None
            if det.extend(self.clock.now(), bound):
                self._alive(a, evidence, diagnosis, now, stalled, bound)
                return None
            by_history = bound is not None and self.clock.now() >= bound.at
            basis = bound.basis if by_history and bound is not None else f"--max-slow {self.cfg.max_slow:.0f} s"
            diagnosis = past_history(diagnosis, stalled, basis, by_history)
        return self._declare(a, evidence, diagnosis, now, stalled)

    def _alive(self, a: Attempt, evidence: Evidence, diagnosis: Diagnosis, now: float, stalled: float,
               bound: HistoryBound | None) -> None:
        """Alive without progress: more time, said plainly with when it ends; past 3 x --min-stall the
        first time for this cause and place, a `slow` incident (notified) says what it does and until when."""
        det, root = a.detector, diagnosis.findings[0]
        until = now + self.cfg.max_slow - det.extended_total  # --max-slow holds in any case
        if bound is not None:
            until = min(until, bound.at)
        when = f"hung at {_clock(until)} ({until - now:.0f} s from now) unless it progresses"
        basis = bound.basis if bound is not None else f"--max-slow {self.cfg.max_slow:.0f} s"
        self.rundir.event(EventKind.EXTENDED, attempt=a.number, verdict=diagnosis.verdict.value, cause=root.cause,
                          seconds=round(det.threshold(), 1), summary=root.summary, hung_at=round(until, 1),
                          bound=basis)
        self._stderr(f"hangwatch: no progress for {stalled:.0f} s, but the job is alive: {root.summary} "
                     f"Giving it {det.threshold():.0f} s more; {when} ({basis}).")
        self.note = f"{diagnosis.verdict.value}: {root.cause} for {stalled:.0f} s; {when}"
        key = (root.cause, f"{root.where.file}:{root.where.function}" if root.where else "")
        if stalled > SLOW_INCIDENT_STALLS * self.cfg.min_stall and key not in a.slow_reported:
            a.slow_reported.add(key)
            self._report_alive(a, evidence, diagnosis, now, stalled,
                               f"no progress for {stalled:.0f} s; {when}, by this job's bound: {basis}")

    def _peers_late(self, a: Attempt, evidence: Evidence, diagnosis: Diagnosis, now: float,
                    stalled: float) -> AttemptEnd | None:
        """Waiting for peers at process-group setup: `waiting` (reported once, after --min-stall) until
        --rendezvous-timeout, then hung. Other nodes may start late; a node that never comes is a hang."""
        det, timeout = a.detector, self.cfg.rendezvous_timeout
        if a.waiting_since is None:  # first seen waiting now: it may have begun since the last progress
            a.waiting_since = max(a.started_at, now - stalled) if det.last is not None else now
        waited = now - a.waiting_since
        until = a.waiting_since + timeout
        from hangwatch.diagnose.bounds import past_rendezvous_timeout

        if waited >= timeout:
            return self._declare(a, evidence, past_rendezvous_timeout(diagnosis, waited, timeout), now, waited)
        if det.state == State.SUSPECT:
            det.hold_until(min(until, now + det.threshold()))
        when = f"hung at {_clock(until)} ({until - now:.0f} s from now) if the peers have not joined"
        self.note = f"waiting for peers for {waited:.0f} s; {when}"
        if not a.waiting_reported and waited >= self.cfg.min_stall:
            a.waiting_reported = True
            self._report_alive(a, evidence, diagnosis, now, waited,
                               f"waiting for {waited:.0f} s; {when} (--rendezvous-timeout {timeout:.0f} s)")
        return None

    def _report_alive(self, a: Attempt, evidence: Evidence, diagnosis: Diagnosis, now: float, stalled: float,
                      when: str) -> None:
        """An incident for a job that is alive or waiting, not (yet) hung: nothing is done to it."""
        from hangwatch.diagnose import Diagnosis
        from hangwatch.diagnose.assemble import build_incident

        root = diagnosis.findings[0]
        root = dataclasses.replace(root, evidence=(*root.evidence, when))
        incident = build_incident(evidence, Diagnosis(diagnosis.verdict, (root, *diagnosis.findings[1:])),
                                  attempt=a.number, action=Action.NONE, last_progress=self._last_progress(a.detector),
                                  detected_at=now)
        try:
            self._record_incident(incident, stalled)
        except Exception:  # a report that cannot be written must not stop supervision
            log.exception("could not record the incident")

    def _probe_startup(self, a: Attempt, now: float) -> AttemptEnd | None:
        """starting, no progress signal yet: capture; hung now if nothing moves and a stuck signature
        matches, else keep the startup grace (compiling, loading, a rendezvous waiting for peers)."""
        a.next_probe_at = now + self.cfg.min_stall
        since = now - a.started_at
        try:
            evidence = self._capture_bounded(a.job.pid, self._capture_window())
        except CaptureError:
            return None
        diagnosis = _diagnose(evidence)
        if a.job.poll() is not None:
            return None
        moved = self._moved_during_capture(a)
        from hangwatch.diagnose.engine import what_moves
        from hangwatch.supervise.startup import startup_decision

        decision = startup_decision(diagnosis, moved, a.still_probes, what_moves(evidence))
        a.still_probes = decision.still
        self.probe_note = f"probed at {since:.0f} s, {decision.note}"
        self.rundir.event(EventKind.PROBE, attempt=a.number, seconds=round(since, 1), hung=decision.hung,
                          verdict=diagnosis.verdict.value, cause=diagnosis.findings[0].cause, note=decision.note,
                          still=decision.still)
        if a.detector.state != State.STARTING:
            return None
        if moved is None and diagnosis.verdict == Verdict.WAITING:
            return self._peers_late(a, evidence, diagnosis, now, since)
        if not decision.hung:
            return None
        return self._declare(a, evidence, diagnosis, now, since)

    def _declare(self, a: Attempt, evidence: Evidence, diagnosis: Diagnosis, now: float,
                 stalled: float) -> AttemptEnd | None:
        """Hung: decide (with the other nodes), write the incident, then act on it."""
        det = a.detector
        root = diagnosis.findings[0]
        det.declare_hung()
        self.note = None
        self.ledger.open_stall(det.last.at if det.last else a.started_at)
        futile = a.action == OnHang.RESTART and self.policy.would_stop(a.number, progressed=a.progressed,
                                                                         max_step=a.max_step)
        status = self._hung_status(root, futile)
        if self.nodes is not None:  # one decision for all nodes: the first one proposed wins, with its exit
            won = self.nodes.decide(a.number, Decision(self.nodes.node, a.action.value, root.cause, status.code,
                                                       status.reason.value, status.why))
            a.action = OnHang(won.action)
            if won.by != self.nodes.node:
                status = _remote_status(won) or status
        decision = None
        if a.action == OnHang.REPORT:
            action = Action.REPORTED
        else:
            decision = self.policy.decide(a.number, asked=a.action == OnHang.RESTART, progressed=a.progressed,
                                          max_step=a.max_step)
            action = Action.RESTARTED if decision.restart else Action.KILLED
        self.hangs.append(Hang.of(root))
        remedy = self._remedy_for(root, a.number + 1) if decision is not None and decision.restart else None
        from hangwatch.diagnose.assemble import build_incident

        incident = build_incident(evidence, diagnosis, attempt=a.number, action=action,
                                  last_progress=self._last_progress(det), detected_at=now, remedy=remedy)
        try:
            path: Path | None = self._record_incident(incident, stalled)
        except Exception:  # a full disk must not keep a hung job from being ended or restarted
            log.exception("could not record the incident")
            path = None
        if decision is None:
            return None
        term = self._terminate(a, reason=f"hung: {root.cause}")
        self._action_event(a, action.value, term, incident=str(path) if path else None)
        return AttemptEnd(status.code, decision, status)

    def _hung_status(self, root: Finding, futile: bool = False) -> ExitStatus:
        """The exit a hung run ends with here: worth a requeue, or not (recover/exitcode.py)."""
        rungs = ladder(root, dict(self.cfg.remedies))
        tried = {r.remedy for r in self.remedies.applied}
        left = None if not rungs else any(r not in tried for r in rungs)
        return hung_exit(Hang.of(root), self.hangs, left, futile)

    def _remedy_for(self, root: Finding, next_attempt: int) -> str | None:
        """When the user's fallbacks are used up, the cause picks the next attempt's remedy (text)."""
        if not self.cfg.auto_fallback or next_attempt <= len(self.cfg.fallbacks) + 1:
            return None
        candidates = self.remedies.candidates(root, loader_overrides=self.cfg.autobeat)
        from hangwatch.recover.choice import choose

        s = self.summary(final=False)
        # A hung job's recent rate may be gone (its newest points are one epoch's first batch): the last one known.
        rate, total = s.steps_per_s or self._known_rate or self._attempt_rate(), s.total_steps or self._known_total
        left = total - s.last_step if total and s.last_step is not None else None
        measured = {str(r["remedy"]): float(r["rate_vs_previous"])
                    for r in remedy_outcomes(self.attempts, self.remedies.applied) if r.get("rate_vs_previous")}
        choice = choose(candidates, now=self.clock.now(), steps_left=left, rate=rate, spent_usd=s.cost_usd,
                        cost_per_hour=self.cfg.cost_per_hour, deadline=self.cfg.deadline, budget=self.cfg.budget,
                        measured=measured, configured=dict(self.cfg.remedy_rates), probed=self._probed_rates())
        if choice is None:
            return None
        applied = self.remedies.apply(choice.remedy, root, next_attempt, why=choice.why)
        if choice.why:
            self.rundir.event(EventKind.REMEDY_CHOICE, attempt=next_attempt, remedy=choice.remedy, why=choice.why)
            self._stderr(f"hangwatch: remedy for attempt {next_attempt}: {choice.why}")
        return (f"{applied.text} (for {applied.cause}, from attempt {next_attempt})"
                + (f"; {choice.why}" if choice.why else ""))

    def _attempt_rate(self) -> float | None:
        """The current attempt's mean step rate, from its launch to its newest step (start-up included, so
        a low estimate): for a job whose steps all came between two polls, where no rate was measured."""
        a = self.attempts[-1] if self.attempts else None
        if a is None or a.last_global is None or a.detector.last is None:
            return None
        base = a.resumed_from.step if a.resume_given and a.resumed_from and a.resumed_from.step else 0
        elapsed = a.detector.last.at - a.started_at
        return (a.last_global - base) / elapsed if a.last_global > base and elapsed > 0 else None

    def _probed_rates(self) -> dict[str, float]:
        """Rate factors from a probe-data report saved in the run directory (probe.json), if any."""
        from hangwatch.recover.choice import probe_rates

        try:
            report = json.loads((self.cfg.run_dir / "probe.json").read_text())
        except (OSError, ValueError):
            return {}
        return probe_rates(report) if isinstance(report, dict) else {}

    def _moved_during_capture(self, a: Attempt) -> str | None:
        """What arrived while the job was being captured: a beat or a counter, output that reset an
        output-only job's clock, or output with new content."""
        was = a.detector.state
        intake = self.intake.poll()
        for p in intake.signals:
            self._progress(a, p)
        a.detector.set_phase(intake.phase, intake.phase_deadline, intake.phase_started, self.clock.now())
        strong = sorted({p.source for p in intake.signals if p.strength > Strength.OUTPUT})
        if strong:
            return f"progress during the capture ({', '.join(strong)})"
        if was == State.SUSPECT and a.detector.state != State.SUSPECT:
            return "progress during the capture (output)"
        if intake.fresh_output:
            return "new output during the capture"
        return None

    # --- progress ------------------------------------------------------------------------------------------
    def _take_progress(self, a: Attempt) -> None:
        intake = self.intake.poll()
        for p in intake.signals:
            self._progress(a, p)
        # A checkpoint is taken one round after it was read: the output the job printed before saving
        # (its step) has arrived through the pumps by then.
        for rec in self._checkpoints_read:
            self._checkpoint(a, rec)
        self._checkpoints_read = self.checkpoint_log.poll()
        a.detector.set_phase(intake.phase, intake.phase_deadline, intake.phase_started, self.clock.now())

    def _flush_checkpoints(self, a: Attempt) -> None:
        """Take every checkpoint recorded so far (the attempt ended: nothing more will be printed)."""
        for rec in [*self._checkpoints_read, *self.checkpoint_log.poll()]:
            self._checkpoint(a, rec)
        self._checkpoints_read = []

    def _checkpoint(self, a: Attempt, rec: dict[str, object]) -> None:
        """A checkpoint the job wrote. A trainer's carries its global step; a plain torch.save gets the
        job's own step around the save (checkpoints.save_step)."""
        raw_at, rank = rec.get("at"), rec.get("rank")
        at = float(raw_at) if isinstance(raw_at, int | float) else self.clock.now()
        step = rec.get("step") if rec.get("kind") in ("lightning", "transformers") else save_step(
            str(rec["path"]), at, list(a.global_points))
        ckpt = Checkpoint(at=at, path=str(rec["path"]),
                          step=step if isinstance(step, int) else None, kind=str(rec.get("kind") or "?"),
                          attempt=a.number, rank=rank if isinstance(rank, int) else -1)
        self.checkpoints.append(ckpt)
        del self.checkpoints[:-100]
        self.rundir.event(EventKind.CHECKPOINT, **ckpt.to_dict())

    def _global_step(self, p: Progress) -> int | None:
        """The job's own step, comparable across attempts: a trainer's global step (its beats start from
        where it resumed) when autobeat knows the trainer, else the log's counter."""
        if p.step is None:
            return None
        if self.intake.trainer_total:
            return p.step if p.strength == Strength.HEARTBEAT else None
        return p.step if p.strength == Strength.COUNTER else None

    def _saw_global(self, a: Attempt, step: int, at: float) -> None:
        a.last_global = step if a.last_global is None else max(a.last_global, step)
        a.global_points.append((at, step))
        if a.first_global is not None:
            return
        a.first_global = step
        if a.number < 2:
            return
        # Where it started: after the checkpoint it was given; from scratch when its first step comes before
        # the newest checkpoint it was not given (the log shows the newest step of each poll, not the first).
        ck, before = a.resumed_from, self.attempts[a.number - 2]
        over = ck is not None and ck.step is not None and ck.step >= 2 and step < ck.step and not a.resume_given
        start = ck.step + 1 if ck is not None and ck.step is not None and a.resume_given else 1 if over else step
        redo = redone_steps(before.last_global, start)
        if redo:
            rate = step_rate(before.detector.intervals, before.detector.points)
            seconds = redo / rate if rate else 0.0
            self.ledger.redone_steps += redo
            self.ledger.redone_seconds += seconds
            self.rundir.event(EventKind.REDONE, attempt=a.number, steps=redo, seconds=round(seconds, 1),
                              from_step=start, previous_last=before.last_global)
        if over and ck is not None:
            self.rundir.event(EventKind.FROM_ZERO, attempt=a.number, step=step, checkpoint=ck.to_dict())
            self._stderr(f"hangwatch: attempt {a.number} started again from the beginning (step {step} seen), "
                         f"although a checkpoint at step {ck.step} existed ({ck.path}); pass --resume-arg "
                         "'--resume {checkpoint}' (your job's option), or make the job load its newest checkpoint.")

    def _progress(self, a: Attempt, p: Progress) -> None:
        g = self._global_step(p)
        if g is not None:
            self._saw_global(a, g, p.at)
        was = a.detector.state
        if p.strength == Strength.HEARTBEAT and p.step is not None:
            a.beat_steps = True
        if not a.detector.progress(p):
            if p.strength == Strength.COUNTER and p.step is not None and not a.beat_steps:
                # Beats without a step (DataLoader batches only) run the clock; the log still names the step.
                a.max_step = p.step if a.max_step is None else max(a.max_step, p.step)
                self.ledger.last_step = p.step
                a.saw_step(p.step)
            return
        self.ledger.saw(int(p.strength))
        self.note = None
        a.waiting_since = None
        if p.strength > Strength.OUTPUT:
            a.progressed = True  # a banner line is not progress for the restart policy
        if p.step is not None:
            if p.strength == Strength.COUNTER:
                # The log's counter survives a resume from checkpoint; autobeat's optimizer step count
                # starts again at 1 in every attempt, so only the former compares across attempts.
                a.max_step = p.step if a.max_step is None else max(a.max_step, p.step)
            self.ledger.last_step = p.step
            a.saw_step(p.step)
        if was == State.HUNG:
            stalled = self.ledger.close_stall(p.at)
            if stalled is not None:
                self.rundir.event(EventKind.RECOVERED, attempt=a.number, stalled_seconds=round(stalled, 1),
                                  step=p.step)
                self._stderr(f"hangwatch: the job made progress again after {stalled:.0f} s (step {p.step}).")
        # The timeline of the HTML report is drawn from these: every second in an attempt's first half
        # minute, then sparser, up to every PROGRESS_EVENT_EVERY_S (a day-long run: ~9000 lines).
        every = min(PROGRESS_EVENT_EVERY_S, max(1.0, (p.at - a.started_at) / 30))
        if self._due(f"progress_event{a.number}", p.at, every):
            self.rundir.event(EventKind.PROGRESS, attempt=a.number, step=p.step, source=p.source)

    def _capture_window(self) -> float:
        if self.cfg.capture_window is not None:
            return self.cfg.capture_window
        return min(5.0, max(1.0, self.cfg.min_stall / 4))

    # --- other nodes ----------------------------------------------------------------------------------------
    def _nodes_tick(self, a: Attempt, now: float) -> AttemptEnd | None:
        nodes = self.nodes
        if nodes is None:
            return None
        called = nodes.tick(a.number, self.state.value, self.ledger.last_step, now)
        if isinstance(called, Decision) and a.job.poll() is None:
            a.action = OnHang(called.action)
            self.rundir.event(EventKind.REMOTE_DECISION, attempt=a.number, **called.to_dict())
            self._stderr(f"hangwatch: node {called.by} decided to {called.action} the job "
                         f"({called.cause}); ending this node's part.")
            term = self._terminate(a, reason=f"node {called.by} decided: {called.action}")
            self._action_event(a, called.action, term, remote=True)
            decision = self.policy.decide(a.number, asked=a.action == OnHang.RESTART, progressed=a.progressed,
                                          max_step=a.max_step)
            status = _remote_status(called)
            if not decision.restart:  # this node's run ends as the deciding node's did
                self.final_state = _FOLLOWED_STATE.get(status.reason)
            return AttemptEnd(status.code, decision, status)
        if isinstance(called, CaptureRequest) and not a.captured_for_peer and a.detector.state not in (
                State.SUSPECT, State.HUNG):
            a.captured_for_peer = True
            self.rundir.event(EventKind.CAPTURE_REQUESTED, attempt=a.number, by=called.by)
            a.detector.suspect_now()
            return self._on_suspect(a, now)
        return None

    # --- incidents and ending the job -----------------------------------------------------------------------
    @staticmethod
    def _last_progress(det: StallDetector) -> LastProgress | None:
        return LastProgress(at=det.last.at, step=det.last.step, source=det.last.source) if det.last else None

    def _record_incident(self, incident: Incident, stalled: float) -> Path:
        """Evidence before action: the incident is on disk and announced before anything is killed."""
        path = self.rundir.write_incident(incident)
        self.ledger.incidents += 1
        root = incident.root_cause
        self.incident_counts[(root.cause if root else "unknown", incident.verdict.value)] += 1
        self.rundir.event(EventKind.INCIDENT, attempt=incident.attempt, verdict=incident.verdict.value,
                          cause=root.cause if root else None, path=str(path), action=incident.action.value)
        self._write_summary(final=False)
        page = self._write_page()
        banner = incident_banner(incident, stalled, path / "report.md", page)
        self._stderr("\n".join(banner))
        self.notifier.send(*notification(command_name(self.cfg.argv), incident, banner))
        return path

    def _action_event(self, a: Attempt, action: str, term: Termination, **extra: object) -> None:
        self.rundir.event(EventKind.ACTION, attempt=a.number, action=action, terminated=term.terminated,
                          killed=term.killed, leftovers=term.leftovers, seconds=round(term.seconds, 2), **extra)

    def _terminate(self, a: Attempt, reason: str, first: int = signal.SIGTERM) -> Termination:
        self.rundir.event(EventKind.TERMINATE, attempt=a.number, reason=reason, signal=signal.Signals(first).name,
                          grace_seconds=self.cfg.kill_grace)
        term = a.job.end(self.cfg.kill_grace, first_signal=first)
        self.ledger.close_stall(self.clock.now())
        if term.leftovers:
            self._stderr(f"hangwatch: processes {term.leftovers} did not die even with SIGKILL (stuck in the "
                         "kernel?); check them with `ps -o pid,stat,wchan -p ...`.")
        return term

    # --- the job ended ---------------------------------------------------------------------------------------
    def _job_exited(self, a: Attempt, code: int) -> AttemptEnd:
        a.job.drain(5.0)
        self._take_progress(a)  # the last lines the pumps read before the job ended
        a.job.scan()
        leftovers = a.job.leftovers()
        if leftovers:  # e.g. a DataLoader worker stuck in user code outlives its main process
            self._terminate(a, reason="job exited, its orphans remain", first=signal.SIGKILL)
        self.ledger.close_stall(self.clock.now())
        status = 128 - code if code < 0 else code
        self.rundir.event(EventKind.JOB_EXIT, attempt=a.number, exit_code=status, orphans_killed=leftovers)
        if code == 0:
            self.final_state = RunState.FINISHED
            return AttemptEnd(0)
        self.final_state = RunState.CRASHED
        oom_now = cgroup_oom_kills(os.getpid())
        oom = (oom_now - self._oom_start) if oom_now is not None and self._oom_start is not None else 0
        from hangwatch.diagnose.crash import diagnose_crash

        kernel = self.kmsg.read() if self.kmsg is not None else ()
        kernel_note = self.kmsg.note if self.kmsg is not None else None
        findings = tuple(diagnose_crash(code, self._output_tail(a.log_offset), oom_kills=oom, pid=a.job.pid,
                                        kernel=kernel, known_pids=tuple(a.job.known_pids())))
        asked = self.cfg.restart_on_crash
        followed: ExitStatus | None = None
        if self.nodes is not None:  # the other nodes' ranks now wait for ours: stop or restart them too
            won = self.nodes.decide(a.number, Decision(self.nodes.node, "restart" if asked else "kill",
                                                       findings[0].cause, status, ExitReason.CRASHED.value,
                                                       f"node {self.nodes.node}'s job exited with status {status}"))
            if won.by != self.nodes.node and won.action != "report":  # another node ended ours first: follow it
                self.rundir.event(EventKind.REMOTE_DECISION, attempt=a.number, **won.to_dict())
                asked, followed = won.action == "restart", _remote_status(won)
        decision = self.policy.decide(a.number, asked=asked, progressed=a.progressed, max_step=a.max_step)
        if decision.restart:
            self.final_state = None
        incident = Incident(verdict=Verdict.CRASHED, detected_at=self.clock.now(),
                            last_progress=self._last_progress(a.detector), attempt=a.number,
                            action=Action.RESTARTED if decision.restart else Action.NONE, processes=(),
                            findings=findings, kernel=kernel, notes=(kernel_note,) if kernel_note else (),
                            remedy=self._remedy_for(findings[0], a.number + 1) if decision.restart else None)
        self._record_incident(incident, 0.0)
        if followed is not None:
            if not decision.restart:
                self.final_state = _FOLLOWED_STATE.get(followed.reason)
            return AttemptEnd(followed.code, decision, followed)
        return AttemptEnd(status, decision)

    def _output_tail(self, since: int) -> str:
        """The end of this attempt's output (from byte ``since`` of output.log on), redacted."""
        self.output.flush()
        try:
            with open(self.cfg.run_dir / "output.log", "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(since, f.tell() - OUTPUT_TAIL_BYTES))
                return redact_text(f.read().decode(errors="replace"))
        except OSError:
            return ""

    # --- signals to hangwatch -------------------------------------------------------------------------------
    def _handle_signals(self, a: Attempt) -> AttemptEnd | None:
        while self._signals:
            signum = self._signals.pop(0)
            if signum == signal.SIGINT and self._interrupts == 0:
                self._interrupts = 1
                self.rundir.event(EventKind.SIGNAL, signal="SIGINT", forwarded=True)
                a.job.forward(signal.SIGINT)
                self._stderr("hangwatch: Ctrl-C passed to the job; press it again to stop the job "
                             f"(SIGTERM, then SIGKILL after {self.cfg.kill_grace:.0f} s).")
                continue
            name = signal.Signals(signum).name
            self.rundir.event(EventKind.SIGNAL, signal=name, forwarded=False, stopping=True)
            self._stderr(f"hangwatch: {name}: stopping the job (SIGTERM, then SIGKILL after "
                         f"{self.cfg.kill_grace:.0f} s).")
            self._terminate(a, reason=f"hangwatch got {name}")
            code = a.job.poll()
            self.final_state = RunState.STOPPED
            status = 128 - code if code is not None and code < 0 else (code if code is not None else 128 + signum)
            return AttemptEnd(status, None, job_exit(status, signalled=True))
        return None

    # --- accounting -------------------------------------------------------------------------------------------
    def _periodic(self, a: Attempt, now: float) -> None:
        if self._due("summary", now, SUMMARY_EVERY_S):
            self._write_summary(final=False)
        if self.status.enabled and self._due("status", now, STATUS_EVERY_S):
            note = self.note or (self.probe_note if a.detector.state == State.STARTING else None)
            self.status.show(status_line(self.summary(final=False), a.detector.stalled_for(now), note))

    def _budget_tick(self, a: Attempt, budget: BudgetWatch, now: float) -> AttemptEnd | None:
        """Warn once when the projected total passes --budget; with --on-over-budget stop, end the job
        (after its next checkpoint when one was seen)."""
        budget.phase(a.detector.phase_name, now)
        text = budget.warning(self.summary(final=False), now)
        if text is not None:
            hold = f"if it stays over for {budget.hold_s:.0f} s"
            then = (f" stopping the job after its next checkpoint {hold}" if budget.waiting_for_checkpoint()
                    else f" stopping the job {hold}" if budget.stop else "")
            self.rundir.event(EventKind.OVER_BUDGET, attempt=a.number, text=text, stop=budget.stop)
            self._stderr(f"hangwatch: over budget: {text}" + (f";{then}." if then else "."))
            self.notifier.send(f"hangwatch: {command_name(self.cfg.argv)} over budget", text)
        if not budget.stop_now(now, a.started_at):
            return None
        if not self._total()[1]:
            if not budget.untrusted_noted:
                budget.untrusted_noted = True
                self._stderr("hangwatch: over budget, but the job is not stopped: its total steps come from a "
                             "progress bar in the log, which may not be the training's. Pass --total-steps N.")
            return None
        from hangwatch.supervise.budget import over_budget_text

        text = over_budget_text(self.summary(final=False), budget.budget) or f"over the ${budget.budget:.2f} budget"
        status = stopped_exit(ExitReason.OVER_BUDGET, f"stopped over budget ({text})")
        if self.nodes is not None:  # every node's ranks stop together, or the others hang in their collectives
            won = self.nodes.decide(a.number, Decision(self.nodes.node, "kill", "over_budget", status.code,
                                                       status.reason.value, status.why))
            if won.by != self.nodes.node and won.action != "report":  # another node decided first: its exit
                status = _remote_status(won)
        after = " after its checkpoint" if budget.checkpoint_ended() else ""
        self._stderr(f"hangwatch: over budget: ending the job{after} (--on-over-budget stop).")
        self._terminate(a, reason="over budget (--on-over-budget stop)")
        self.final_state = RunState.STOPPED
        return AttemptEnd(EXIT_STOPPED, None, status)

    def summary(self, final: bool) -> RunSummary:
        """The run's accounting as of now."""
        det = self.attempts[-1].detector if self.attempts else None
        last = det.last.at if det is not None and det.last is not None else None
        st = self.exit_status if final else None
        summary = dataclasses.replace(
            self._ledger_summary(final, det), remedies=remedy_outcomes(self.attempts, self.remedies.applied),
            attempt_stats=attempt_stats(self.attempts, [f.args for f in self.cfg.fallbacks], self.remedies.applied),
            budget_usd=self.cfg.budget, last_progress_at=None if last is None else round(last, 3), note=self.note,
            history=det.history_summary() if det is not None else None,
            checkpoint=self.checkpoints[-1].to_dict() if self.checkpoints else None,
            host=os.uname().nodename, supervisor_pid=os.getpid(), updated_at=round(self.clock.now(), 3),
            exit_reason=st.reason.value if st else None, exit_why=st.why if st else None,
            requeue=st.requeue if st else None)
        if self.cfg.deadline is None:
            return summary
        from hangwatch.supervise.deadline import with_deadline

        return with_deadline(summary, self.cfg.deadline, self.clock.now())

    def _deadline_tick(self, a: Attempt, now: float) -> None:
        """Warn when the projected finish crosses --deadline (once it has held a while), and again when it
        comes back before it."""
        if self.deadline_watch is None or not self._due("deadline", now, STATUS_EVERY_S):
            return
        text = self.deadline_watch.news(self.summary(final=False), now)
        if text is None:
            return
        meets = self.deadline_watch.meets
        self.rundir.event(EventKind.DEADLINE, attempt=a.number, text=text, meets=meets)
        self._stderr(f"hangwatch: {text}.")
        self.notifier.send(f"hangwatch: {command_name(self.cfg.argv)} "
                           f"{'back on time' if meets else 'projected to miss its deadline'}", text)

    def _ledger_summary(self, final: bool, det: StallDetector | None) -> RunSummary:
        return self.ledger.summary(
            self.clock.now(), command=redact_argv(self.cfg.argv), run_dir=str(self.cfg.run_dir), state=self.state,
            attempts=len(self.attempts), exit_code=self.exit_code, final=final,
            intervals=det.intervals if det else (), total=self._total()[0],
            points=det.points if det else ())

    def _write_page(self) -> Path | None:
        """report.html in the run directory (the page `hangwatch report --html` makes), or None if it failed."""
        try:
            from hangwatch.report.html import render_html
            from hangwatch.report.run_report import load_run

            path = self.cfg.run_dir / "report.html"
            write_text_atomic(path, render_html(load_run(self.cfg.run_dir), self.cfg.run_dir))
            return path
        except Exception:  # the page is a view; it must not stop supervision
            log.exception("could not write report.html")
            return None

    def _total(self) -> tuple[int | None, bool]:
        """The steps the job will run, and whether that total is trustworthy enough to stop a job on:
        --total-steps, else the trainer's max steps (autobeat), else the N of the log's `n/N` (any bar)."""
        if self.cfg.total_steps:
            return self.cfg.total_steps, True
        if self.intake.trainer_total:
            return self.intake.trainer_total, True
        return self.intake.counter_total, False

    def _write_summary(self, final: bool) -> None:
        self._last["summary"] = self.clock.now()
        try:
            summary = self.summary(final)
            self.rundir.write_summary(summary)
            self._known_rate = summary.steps_per_s or self._known_rate
            self._known_total = summary.total_steps or self._known_total
            if self.metrics is not None:
                from hangwatch.supervise.metrics import Snapshot

                self.metrics.update(Snapshot(
                    summary, self.attempts[-1].started_at if self.attempts else None, self.intake.rank_progress(),
                    tuple((c, v, n) for (c, v), n in sorted(self.incident_counts.items()))))
        except Exception:  # accounting must not stop supervision
            log.exception("could not write summary.json")


_FOLLOWED_STATE = {ExitReason.HUNG_REQUEUE: RunState.HUNG, ExitReason.HUNG_FINAL: RunState.HUNG,
                   ExitReason.CRASHED: RunState.CRASHED, ExitReason.OVER_BUDGET: RunState.STOPPED,
                   ExitReason.DEADLINE: RunState.STOPPED}


def _remote_status(called: Decision) -> ExitStatus:
    """The exit the deciding node proposed, for this node to end with the same code (a decision without
    one, from an older version: 124 for a hang it ended)."""
    why = called.why or f"node {called.by} decided to {called.action} the job ({called.cause})"
    try:
        return ExitStatus(called.code if called.code is not None else EXIT_HUNG_REQUEUE,
                          ExitReason(called.reason or ExitReason.HUNG_REQUEUE.value), why)
    except ValueError:  # a newer version's reason: its code, read as a hang's
        return ExitStatus(called.code or EXIT_HUNG_REQUEUE, ExitReason.HUNG_FINAL, why)


def _clock(at: float) -> str:
    """A unix time as the local wall clock, for 'hung at 14:20:05'."""
    return time.strftime("%H:%M:%S", time.localtime(at))


def _diagnose(evidence: Evidence) -> Diagnosis:
    from hangwatch.diagnose import diagnose

    return diagnose(evidence)
