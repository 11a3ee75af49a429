"""The supervisor: one loop over explicit states per attempt, one place that maps state to action.

    launch -> watch (progress in, stall clock) -> suspect -> capture + diagnose
           -> alive/slow: extend        -> hung: report | kill | restart
    job exits by itself -> exit code (crash: incident, and restart if asked)

Signals become flags the loop reads; the job is always ended in ``finally``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import FrameType
from typing import Any

from hangwatch.build import build_incident
from hangwatch.capture import capture_job
from hangwatch.capture.system import cgroup_oom_kills
from hangwatch.diagnose import Diagnosis, diagnose
from hangwatch.diagnose.crash import diagnose_crash
from hangwatch.diagnose.distributed import merge_nodes, rank_summaries
from hangwatch.errors import CaptureError
from hangwatch.evidence import Evidence
from hangwatch.incident import Action, Finding, Incident, LastProgress, Verdict
from hangwatch.recover.terminate import JobTracker, Termination, end_tree, popen_waiter
from hangwatch.redact import redact_argv, redact_text
from hangwatch.supervise.coord import Coordinator
from hangwatch.supervise.detector import DetectorConfig, Progress, StallDetector, State, Strength
from hangwatch.supervise.fallback import command_for_attempt
from hangwatch.supervise.heartbeat import read_heartbeats
from hangwatch.supervise.launch import Launched, OutputLog, StatusLine, launch
from hangwatch.supervise.notify import Notifier
from hangwatch.supervise.progress import OutputTail, ProgressParser
from hangwatch.supervise.rundir import RunDir, command_name
from hangwatch.supervise.topology import Topology

log = logging.getLogger(__name__)

POLL_S = 0.25
COORD_EVERY_S = 0.5
NODE_SUMMARY_WAIT_S = 8.0  # beyond the capture window: how long to wait for the other nodes' summaries
SCAN_EVERY_S = 2.0
SUMMARY_EVERY_S = 5.0
PROGRESS_EVENT_EVERY_S = 10.0
STATUS_EVERY_S = 1.0
OUTPUT_TAIL_BYTES = 64 * 1024
EXIT_HUNG = 124
FUTILE_ATTEMPTS = 2  # stop restarting after this many attempts in a row that hung with no new progress


class OnHang(str, Enum):
    REPORT = "report"
    KILL = "kill"
    RESTART = "restart"


@dataclass(frozen=True)
class Fallback:
    args: str = ""
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunConfig:
    argv: list[str]
    run_dir: Path
    min_stall: float = 120.0
    startup_grace: float = 900.0
    on_hang: OnHang = OnHang.REPORT
    max_restarts: int = 3
    fallbacks: tuple[Fallback, ...] = ()
    progress_regex: re.Pattern[str] | None = None
    cost_per_hour: float | None = None
    kill_grace: float = 30.0
    notify: tuple[str, ...] = ()
    restart_on_crash: bool = False
    capture_window: float | None = None  # None: a quarter of --min-stall, between 1 and 5 s
    max_slow: float = 1800.0
    use_pty: bool = False
    topology: Topology | None = None  # set for a multi-node job: coordinate with the other nodes


class Outcome(str, Enum):
    EXITED = "exited"  # the job ended by itself
    HUNG_KILLED = "hung_killed"
    CRASHED = "crashed"
    STOPPED = "stopped"  # the user asked hangwatch to stop


@dataclass
class Attempt:
    number: int
    argv: list[str]
    started_at: float
    launched: Launched
    detector: StallDetector
    tracker: JobTracker
    max_step: int | None = None
    progressed: bool = False
    stall_started: float | None = None  # the last progress before a declared stall
    hb_counts: dict[int, int] = field(default_factory=dict)
    action: OnHang = OnHang.REPORT  # what is done on a hang: ours, or the decision all nodes agreed on
    captured_for_peer: bool = False


class Supervisor:
    def __init__(self, cfg: RunConfig, env: dict[str, str] | None = None) -> None:
        self.cfg = cfg
        self.base_env = dict(os.environ if env is None else env)
        self.notifier = Notifier(list(cfg.notify))  # validates the URLs before anything is created
        self.rundir = RunDir(cfg.run_dir)
        self.status = StatusLine(enabled=sys.stderr.isatty())
        self.tail = OutputTail()
        self._tail_seq = 0
        self.parser = ProgressParser(cfg.progress_regex)
        self.started_at = time.time()
        self.attempts: list[Attempt] = []
        self.incidents = 0
        self.stalled_seconds = 0.0
        self.last_step: int | None = None
        self.last_total: int | None = None
        self.exit_code: int | None = None
        self.state = "starting"
        self._signals: list[int] = []
        self._interrupts = 0
        self._wake = threading.Event()
        self._last_summary = 0.0
        self._last_progress_event = 0.0
        self._last_status = 0.0
        self._oom_start: int | None = None
        self.rank_progress: dict[int, tuple[float, int | None, bytes]] = {}
        self.coord: Coordinator | None = None
        self._last_coord = 0.0
        self._log_file = self.rundir.open_output_log()
        self.output = OutputLog(self._log_file)

    # --- signals ------------------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signals.append(signum)
        self._wake.set()

    @contextlib.contextmanager
    def _signal_handlers(self) -> Iterator[None]:
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            yield
        finally:
            for s, h in old.items():
                signal.signal(s, h)

    # --- output ---------------------------------------------------------------------------------------
    def _on_chunk(self, data: bytes, at: float) -> None:
        """Pump thread: keep the newest output for the supervisor loop to parse."""
        self.tail.add(data, at)

    def _stderr(self, text: str) -> None:
        self.status.clear()
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()

    # --- the run -----------------------------------------------------------------------------------------
    def run(self) -> int:
        self.rundir.event("start", command=redact_argv(self.cfg.argv), run_dir=str(self.cfg.run_dir),
                          on_hang=self.cfg.on_hang.value, min_stall=self.cfg.min_stall,
                          startup_grace=self.cfg.startup_grace)
        with self._signal_handlers():
            try:
                if self.cfg.topology is not None:
                    self._connect(self.cfg.topology)
                self.exit_code = self._run_attempts()
            finally:
                for a in self.attempts:
                    if a.launched.popen.poll() is None:  # never leave the job running unseen
                        self._terminate(a, reason="hangwatch exiting")
                self.output.flush()
                self.notifier.flush()
                self.rundir.event("exit", exit_code=self.exit_code)
                self._write_summary(final=True)
                self.rundir.close()
                self._log_file.close()
        return self.exit_code if self.exit_code is not None else 1

    def _connect(self, topo: Topology) -> None:
        timeout = max(30.0, min(self.cfg.startup_grace, 600.0))
        self._stderr(f"hangwatch: node {topo.node_rank} of {topo.nnodes}; coordinating through {topo.endpoint}")
        self.coord = Coordinator(topo, timeout)
        self.rundir.event("coordination", node=topo.node_rank, nnodes=topo.nnodes, endpoint=topo.endpoint)

    def _run_attempts(self) -> int:
        futile = 0
        best_step: int | None = None
        while True:
            n = len(self.attempts) + 1
            attempt = self._launch(n)
            outcome, code = self._watch(attempt)
            if outcome in (Outcome.EXITED, Outcome.STOPPED):
                return code
            new_progress = attempt.progressed and (
                attempt.max_step is None or best_step is None or attempt.max_step > best_step)
            if attempt.max_step is not None:
                best_step = attempt.max_step if best_step is None else max(best_step, attempt.max_step)
            futile = 0 if new_progress else futile + 1
            restart = (attempt.action == OnHang.RESTART if outcome == Outcome.HUNG_KILLED
                       else self.cfg.restart_on_crash)
            if not restart:
                return code
            if n > self.cfg.max_restarts:
                self._stderr(f"hangwatch: attempt {n} failed and the {self.cfg.max_restarts} restart(s) allowed are "
                             "used up; stopping. Raise --max-restarts to allow more.")
                self.rundir.event("give_up", reason="max_restarts", attempts=n)
                return code
            if futile >= FUTILE_ATTEMPTS:
                self._stderr(f"hangwatch: the last {futile} attempts failed without any new progress; stopping "
                             "restarts. Fix the cause named in the incident report, or add a --fallback.")
                self.rundir.event("give_up", reason="no_new_progress", attempts=n)
                return code

    def _launch(self, n: int) -> Attempt:
        fallbacks = [f.args for f in self.cfg.fallbacks]
        argv = command_for_attempt(self.cfg.argv, fallbacks, n)
        env = dict(self.base_env)
        for fb in self.cfg.fallbacks[: max(0, n - 1)]:
            env.update(fb.env)
        env.update({"PYTHONUNBUFFERED": "1", "HANGWATCH_RUN_DIR": str(self.cfg.run_dir.resolve()),
                    "HANGWATCH_ATTEMPT": str(n), "HANGWATCH_HEARTBEAT_DIR": str(self.rundir.heartbeat_dir.resolve())})
        for hb in self.rundir.heartbeat_dir.glob("*.hb"):
            hb.unlink(missing_ok=True)  # a new attempt starts with no heartbeats
        self.rank_progress.clear()
        launched = launch(argv, env, None, self.output, self._on_chunk, self.status, self.cfg.use_pty)
        now = time.time()
        if self._oom_start is None:
            self._oom_start = cgroup_oom_kills(launched.pid)
        det = StallDetector(DetectorConfig(min_stall=self.cfg.min_stall, startup_grace=self.cfg.startup_grace,
                                           max_slow=self.cfg.max_slow), now)
        attempt = Attempt(n, argv, now, launched, det, JobTracker(launched.pid), action=self.cfg.on_hang)
        self.attempts.append(attempt)
        self.state = "starting"
        if n > 1:
            self.rundir.event("restart", attempt=n, command=redact_argv(argv))
            self._stderr(f"hangwatch: restarting (attempt {n}): {' '.join(redact_argv(argv))}")
        self.rundir.event("launch", attempt=n, pid=launched.pid, command=redact_argv(argv))
        return attempt

    # --- watching one attempt ---------------------------------------------------------------------------
    def _watch(self, a: Attempt) -> tuple[Outcome, int]:
        last_scan = 0.0
        while True:
            stop = self._handle_signals(a)
            if stop is not None:
                return stop
            code = a.launched.popen.poll()
            if code is not None:
                return self._job_exited(a, code)
            now = time.time()
            self._take_progress(a)
            if now - last_scan >= SCAN_EVERY_S:
                a.tracker.scan()
                last_scan = now
            if a.detector.check(now):
                outcome = self._suspect(a, now)
                if outcome is not None:
                    return outcome
            if self.coord is not None and now - self._last_coord >= COORD_EVERY_S:
                self._last_coord = now
                outcome = self._coord_tick(a, now)
                if outcome is not None:
                    return outcome
            self._periodic(a, now)
            self._wake.wait(POLL_S)
            self._wake.clear()

    def _take_progress(self, a: Attempt) -> None:
        det = a.detector
        seq, at, data = self.tail.snapshot()
        if seq != self._tail_seq:
            self._tail_seq = seq
            self._progress(a, Progress(at, None, "output", Strength.OUTPUT))
            try:
                counter = self.parser.latest(data)
            except Exception:  # a parser bug must not stop supervision
                log.exception("progress parser failed")
                counter = None
            for rank, c in self.parser.by_rank(data).items():
                prev = self.rank_progress.get(rank)
                if prev is None or prev[2] != c.key:
                    self.rank_progress[rank] = (at, c.step, c.key)
            if counter is not None:
                if counter.total is not None:
                    self.last_total = counter.total
                self._progress(a, Progress(at, counter.step, counter.source, Strength.COUNTER))
        phase: tuple[str, float | None] | None = None
        for hb in read_heartbeats(self.rundir.heartbeat_dir):
            if hb.count != a.hb_counts.get(hb.pid, 0):
                a.hb_counts[hb.pid] = hb.count
                if hb.rank is not None:
                    self.rank_progress[hb.rank] = (hb.at, hb.step, str(hb.count).encode())
                self._progress(a, Progress(hb.at, hb.step, "heartbeat", Strength.HEARTBEAT))
            if hb.phase is not None:
                phase = (hb.phase, hb.phase_deadline)
        det.set_phase(phase[0] if phase else None, phase[1] if phase else None)

    def _progress(self, a: Attempt, p: Progress) -> None:
        was = a.detector.state
        if not a.detector.progress(p):
            return
        a.progressed = True
        if p.step is not None:
            a.max_step = p.step if a.max_step is None else max(a.max_step, p.step)
            self.last_step = p.step
        self.state = "progressing"
        if was == State.HUNG and a.stall_started is not None:
            stalled = p.at - a.stall_started
            self.stalled_seconds += stalled
            a.stall_started = None
            self.rundir.event("recovered", attempt=a.number, stalled_seconds=round(stalled, 1), step=p.step)
            self._stderr(f"hangwatch: the job made progress again after {stalled:.0f} s (step {p.step}).")
        if p.at - self._last_progress_event >= PROGRESS_EVENT_EVERY_S:
            self._last_progress_event = p.at
            self.rundir.event("progress", attempt=a.number, step=p.step, source=p.source)

    def _capture_window(self) -> float:
        if self.cfg.capture_window is not None:
            return self.cfg.capture_window
        return min(5.0, max(1.0, self.cfg.min_stall / 4))

    def _suspect(self, a: Attempt, now: float) -> tuple[Outcome, int] | None:
        det = a.detector
        stalled = det.stalled_for(now)
        self.state = "suspect"
        self.rundir.event("suspect", attempt=a.number, stalled_seconds=round(stalled, 1),
                          threshold=round(det.threshold(), 1), phase=det.phase_name)
        try:
            evidence = capture_job(a.launched.pid, self._capture_window())
        except CaptureError:
            return None  # the job is gone; the loop sees its exit next
        if self.rank_progress:
            evidence = dataclasses.replace(evidence, rank_progress=tuple(
                (r, at, step) for r, (at, step, _) in sorted(self.rank_progress.items())))
        diagnosis = diagnose(evidence)
        if a.launched.popen.poll() is not None:
            return None
        if self.coord is not None:
            diagnosis = self._merge_with_nodes(a, evidence, diagnosis)
        if diagnosis.verdict in (Verdict.SLOW, Verdict.PROGRESSING) and det.extend(time.time()):
            rc = diagnosis.findings[0]
            self.rundir.event("extended", attempt=a.number, verdict=diagnosis.verdict.value, cause=rc.cause,
                              seconds=round(det.threshold(), 1), summary=rc.summary)
            self._stderr(f"hangwatch: no progress for {stalled:.0f} s, but the job is alive and working "
                         f"({rc.cause}); giving it {det.threshold():.0f} s more.")
            self.state = "progressing"
            return None
        det.declare_hung()
        a.stall_started = det.last.at if det.last else a.started_at
        self.state = "hung"
        if self.coord is not None:  # one decision for all nodes: the first one proposed wins
            rc0 = diagnosis.findings[0]
            decided = self.coord.decide(a.number, {"by": self.coord.node, "action": a.action.value, "cause": rc0.cause})
            a.action = OnHang(decided["action"])
        action = {OnHang.REPORT: Action.REPORTED, OnHang.KILL: Action.KILLED,
                  OnHang.RESTART: Action.RESTARTED}[a.action]
        if action == Action.RESTARTED and len(self.attempts) > self.cfg.max_restarts:
            action = Action.KILLED
        incident = build_incident(evidence, diagnosis, attempt=a.number, action=action,
                                  last_progress=self._last_progress(det), detected_at=now)
        path = self._record_incident(incident, stalled)
        if a.action == OnHang.REPORT:
            return None
        term = self._terminate(a, reason=f"hung: {incident.findings[0].cause}")
        self.rundir.event("action", attempt=a.number, action=action.value, incident=str(path),
                          terminated=term.terminated, killed=term.killed, leftovers=term.leftovers,
                          seconds=round(term.seconds, 2))
        return Outcome.HUNG_KILLED, EXIT_HUNG

    # --- other nodes ----------------------------------------------------------------------------------------
    def _merge_with_nodes(self, a: Attempt, evidence: Evidence, diagnosis: Diagnosis) -> Diagnosis:
        """Share this node's rank summary, ask the others to capture, merge every node's summary."""
        coord = self.coord
        if coord is None:
            return diagnosis
        coord.publish_summary(a.number, {"host": socket.gethostname(), "ranks": rank_summaries(evidence),
                                         "verdict": diagnosis.verdict.value, "cause": diagnosis.findings[0].cause})
        coord.request_capture(a.number)
        summaries = coord.gather_summaries(a.number, self._capture_window() + NODE_SUMMARY_WAIT_S)
        merged = merge_nodes(summaries, coord.topo.nnodes)
        self.rundir.event("nodes", attempt=a.number, reported=sorted(summaries),
                          merged=merged.cause if merged else None)
        if merged is None:
            return diagnosis
        return Diagnosis(Verdict.HUNG, (merged, *diagnosis.findings))

    def _coord_tick(self, a: Attempt, now: float) -> tuple[Outcome, int] | None:
        coord = self.coord
        if coord is None:
            return None
        coord.publish_live(a.number, self.state, self.last_step)
        decided = coord.decision(a.number)
        if decided is not None and decided.get("by") != coord.node and decided.get("action") != "report" and (
                a.launched.popen.poll() is None):
            a.action = OnHang(decided["action"])
            self.rundir.event("remote_decision", attempt=a.number, **decided)
            self._stderr(f"hangwatch: node {decided['by']} decided to {decided['action']} the job "
                         f"({decided.get('cause')}); ending this node's part.")
            term = self._terminate(a, reason=f"node {decided['by']} decided: {decided['action']}")
            self.rundir.event("action", attempt=a.number, action=decided["action"], remote=True,
                              terminated=term.terminated, killed=term.killed, leftovers=term.leftovers)
            return Outcome.HUNG_KILLED, EXIT_HUNG
        asked = coord.capture_requested(a.number)
        if asked is not None and not a.captured_for_peer and a.detector.state not in (State.SUSPECT, State.HUNG):
            a.captured_for_peer = True
            self.rundir.event("capture_requested", attempt=a.number, by=asked.get("by"))
            a.detector.state = State.SUSPECT
            return self._suspect(a, now)
        return None

    @staticmethod
    def _last_progress(det: StallDetector) -> LastProgress | None:
        return LastProgress(at=det.last.at, step=det.last.step, source=det.last.source) if det.last else None

    def _record_incident(self, incident: Incident, stalled: float) -> Path:
        """Evidence before action: the incident is on disk and announced before anything is killed."""
        path = self.rundir.write_incident(incident)
        self.incidents += 1
        rc: Finding | None = incident.root_cause
        self.rundir.event("incident", attempt=incident.attempt, verdict=incident.verdict.value,
                          cause=rc.cause if rc else None, path=str(path), action=incident.action.value)
        lines = [f"hangwatch: {incident.verdict.value.upper()}"
                 + (f" after {stalled:.0f} s without progress" if incident.verdict != Verdict.CRASHED else "")
                 + (f" (last: step {incident.last_progress.step}, {incident.last_progress.source})"
                    if incident.last_progress and incident.last_progress.step is not None else "")
                 + (f": {rc.cause}" if rc else "")]
        if rc is not None:
            lines.append(f"  {rc.summary}")
            if rc.where is not None and rc.where.file:
                lines.append(f"  at {rc.where.file}:{rc.where.line}  {rc.where.function} (pid {rc.where.pid}"
                             + (f", rank {rc.where.rank})" if rc.where.rank is not None else ")"))
            if rc.fix:
                lines.append(f"  fix: {rc.fix[0]}")
        lines.append(f"  action: {incident.action.value}; report: {path / 'report.md'}")
        self._stderr("\n".join(lines))
        title = f"hangwatch: {self._name()} {incident.verdict.value}" + (f" ({rc.cause})" if rc else "")
        self.notifier.send(title, "\n".join(lines[1:]))
        return path

    def _name(self) -> str:
        return command_name(self.cfg.argv)

    def _terminate(self, a: Attempt, reason: str, first: int = signal.SIGTERM) -> Termination:
        self.rundir.event("terminate", attempt=a.number, reason=reason, signal=signal.Signals(first).name,
                          grace_seconds=self.cfg.kill_grace)
        term = end_tree(a.tracker, self.cfg.kill_grace, popen_waiter(a.launched.popen), first_signal=first)
        a.launched.join_pumps(5.0)
        if a.stall_started is not None:
            self.stalled_seconds += time.time() - a.stall_started
            a.stall_started = None
        if term.leftovers:
            self._stderr(f"hangwatch: processes {term.leftovers} did not die even with SIGKILL (stuck in the "
                         "kernel?); check them with `ps -o pid,stat,wchan -p ...`.")
        return term

    # --- the job ended ---------------------------------------------------------------------------------------
    def _job_exited(self, a: Attempt, code: int) -> tuple[Outcome, int]:
        a.launched.join_pumps(5.0)
        self._take_progress(a)  # the last lines the pumps read before the job ended
        a.tracker.scan()
        leftovers = a.tracker.alive()
        if leftovers:  # e.g. a DataLoader worker stuck in user code outlives its main process
            self._terminate(a, reason="job exited, its orphans remain", first=signal.SIGKILL)
        if a.stall_started is not None:
            self.stalled_seconds += time.time() - a.stall_started
            a.stall_started = None
        status = 128 - code if code < 0 else code
        self.rundir.event("job_exit", attempt=a.number, exit_code=status, orphans_killed=[p.pid for p in leftovers])
        if code == 0:
            self.state = "finished"
            return Outcome.EXITED, 0
        self.state = "crashed"
        tail = self._output_tail()
        oom_now = cgroup_oom_kills(os.getpid())
        oom = (oom_now - self._oom_start) if oom_now is not None and self._oom_start is not None else 0
        findings = tuple(diagnose_crash(code, tail, oom_kills=oom, pid=a.launched.pid))
        if self.coord is not None:  # the other nodes' ranks now wait for ours: stop or restart them too
            self.coord.decide(a.number, {"by": self.coord.node, "action": "restart" if self.cfg.restart_on_crash
                                         else "kill", "cause": findings[0].cause})
        action = Action.RESTARTED if self.cfg.restart_on_crash and len(self.attempts) <= self.cfg.max_restarts \
            else Action.NONE
        incident = Incident(verdict=Verdict.CRASHED, detected_at=time.time(),
                            last_progress=self._last_progress(a.detector), attempt=a.number, action=action,
                            processes=(), findings=findings)
        self._record_incident(incident, 0.0)
        return Outcome.CRASHED, status

    def _output_tail(self) -> str:
        self.output.flush()
        try:
            with open(self.cfg.run_dir / "output.log", "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - OUTPUT_TAIL_BYTES))
                return redact_text(f.read().decode(errors="replace"))
        except OSError:
            return ""

    # --- signals to hangwatch -------------------------------------------------------------------------------
    def _handle_signals(self, a: Attempt) -> tuple[Outcome, int] | None:
        while self._signals:
            sig = self._signals.pop(0)
            if sig == signal.SIGINT and self._interrupts == 0:
                self._interrupts = 1
                self.rundir.event("signal", signal="SIGINT", forwarded=True)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(a.launched.pid, signal.SIGINT)
                self._stderr("hangwatch: Ctrl-C passed to the job; press it again to stop the job "
                             f"(SIGTERM, then SIGKILL after {self.cfg.kill_grace:.0f} s).")
                continue
            name = signal.Signals(sig).name
            self.rundir.event("signal", signal=name, forwarded=False, stopping=True)
            self._stderr(f"hangwatch: {name}: stopping the job (SIGTERM, then SIGKILL after "
                         f"{self.cfg.kill_grace:.0f} s).")
            self._terminate(a, reason=f"hangwatch got {name}")
            code = a.launched.popen.returncode
            self.state = "stopped"
            status = 128 - code if code is not None and code < 0 else (code if code is not None else 128 + sig)
            return Outcome.STOPPED, status
        return None

    # --- accounting -------------------------------------------------------------------------------------------
    def _periodic(self, a: Attempt, now: float) -> None:
        if now - self._last_summary >= SUMMARY_EVERY_S:
            self._write_summary(final=False)
        if self.status.enabled and now - self._last_status >= STATUS_EVERY_S:
            self._last_status = now
            self.status.show(self._status_text(a, now))

    def _status_text(self, a: Attempt, now: float) -> str:
        det = a.detector
        parts = [f"hangwatch [{self.state}]"]
        if self.last_step is not None:
            parts.append(f"step {self.last_step}" + (f"/{self.last_total}" if self.last_total else ""))
        if det.intervals:
            recent = list(det.intervals)[-20:]
            rate = len(recent) / sum(recent) if sum(recent) > 0 else 0.0
            parts.append(f"{rate:.2f} steps/s")
            if self.last_total and self.last_step is not None and rate > 0:
                eta = (self.last_total - self.last_step) / rate
                parts.append(f"ETA {int(eta // 3600)}:{int(eta % 3600 // 60):02d}:{int(eta % 60):02d}")
        parts.append(f"last progress {det.stalled_for(now):.0f} s ago")
        return " | ".join(parts)

    def summary(self, final: bool) -> dict[str, Any]:
        now = time.time()
        wall = max(1e-9, now - self.started_at)
        stalled = self.stalled_seconds + sum(now - a.stall_started for a in self.attempts if a.stall_started)
        out: dict[str, Any] = {
            "schema": "hangwatch.summary/1",
            "command": redact_argv(self.cfg.argv),
            "run_dir": str(self.cfg.run_dir),
            "state": self.state,
            "attempts": len(self.attempts),
            "exit_code": self.exit_code if final else None,
            "started_at": round(self.started_at, 3),
            "ended_at": round(now, 3) if final else None,
            "wall_seconds": round(wall, 1),
            "last_step": self.last_step,
            "incidents": self.incidents,
            "stalled_seconds": round(stalled, 1),
            "goodput": round(max(0.0, 1.0 - stalled / wall), 4),
        }
        if self.cfg.cost_per_hour is not None:
            out["cost_per_hour"] = self.cfg.cost_per_hour
            out["cost_usd"] = round(wall / 3600 * self.cfg.cost_per_hour, 4)
            out["wasted_usd"] = round(stalled / 3600 * self.cfg.cost_per_hour, 4)
        return out

    def _write_summary(self, final: bool) -> None:
        self._last_summary = time.time()
        try:
            self.rundir.write_summary(self.summary(final))
        except Exception:  # accounting must not stop supervision
            log.exception("could not write summary.json")
