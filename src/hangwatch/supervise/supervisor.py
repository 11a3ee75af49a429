"""The run loop: one attempt at a time, one explicit state machine per attempt.

Each round of ``_step`` reads signals, the job's exit, progress and the other nodes, then calls the
handler of the current ``RunState``:

    starting/progressing --threshold passes--> suspect
    suspect --capture: alive/slow--> (extended) progressing      suspect --capture: hung--> hung
    hung --progress--> progressing (recovered)                   hung + kill/restart: the attempt ends
    job exits by itself: finished, or crashed (incident, and a restart if asked)

What each step does lives with a collaborator that shares the run's ``RunContext``: ``tracking``
(progress, checkpoints), ``suspect`` (capture and judge), ``act`` (declare, record, act; crashes),
``startup`` (probes before the first progress), ``books`` (summary, status line, metrics, budget and
deadline), ``signals``, ``node_round`` (other nodes), ``capturing`` and ``plan`` (what attempt N runs).
A judge returns an outcome (``Extend``, ``Hold``, ``Report``, ``Declare``, ``Reopen``, ``CaptureNow``, ``EndJob``,
or the attempt's end: attempt.py); this loop applies it (``apply_outcome``), and is the one place the attempt's stall
detector is written (progress, phases, extensions, holds, declarations) and the one place the job is ended
(``end_attempt`` for a hang, a signal, the budget, another node's decision; ``end_job`` for orphans and for
hangwatch's own exit, in ``finally``: tests/unit/test_structure.py reads it from what calls what). The
clock, the launcher and the capture are injectable, so the loop is tested on scripted jobs.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from hangwatch.capture.cgroup import cgroup_oom_kills
from hangwatch.records.run import EventKind, OnHang
from hangwatch.recover.exitcode import (
    END_STATE,
    EXIT_SUPERVISION_FAILED,
    ExitReason,
    ExitStatus,
    earlier_hangs,
    job_exit,
)
from hangwatch.recover.remedy import RemedyPlan
from hangwatch.recover.restart import RestartPolicy
from hangwatch.redact import redact_argv
from hangwatch.runs.index import register
from hangwatch.supervise.attempt import (
    Attempt,
    AttemptEnd,
    Capture,
    CaptureNow,
    Clock,
    Declare,
    EndJob,
    Extend,
    Hold,
    LookAt,
    Outcome,
    Reopen,
    Report,
    Resume,
    StartupProbes,
    SupervisionFailed,
    SystemClock,
)
from hangwatch.supervise.books.accounting import Ledger
from hangwatch.supervise.books.books import RunAccounts
from hangwatch.supervise.books.notify import Notifier
from hangwatch.supervise.books.rundir import RunDir
from hangwatch.supervise.config import RunConfig
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.job.autobeat import remove_loader_records, remove_sockets_outside
from hangwatch.supervise.job.gpu_release import GpuGuard
from hangwatch.supervise.job.held import account_hold
from hangwatch.supervise.job.job import DRAIN_QUIET_S, Job, LaunchedJob, Launcher
from hangwatch.supervise.job.launch import OnChunk, OutputLog, StatusLine, launch
from hangwatch.supervise.job.plan import plan_attempt
from hangwatch.supervise.job.signals import SignalInbox
from hangwatch.supervise.nodes.follow import Follower
from hangwatch.supervise.nodes.round import NodeRounds
from hangwatch.supervise.progress.detector import EARLY_LOOK_S, NO_CLOCK_S, DetectorConfig, StallDetector, State
from hangwatch.supervise.progress.intake import Intake, ProgressIntake
from hangwatch.supervise.progress.tracking import Tracker
from hangwatch.supervise.stall.act import IncidentHandler
from hangwatch.supervise.stall.capturing import Capturer
from hangwatch.supervise.stall.look import Look, Looker, Unseen, capture_and_diagnose, what_moved
from hangwatch.supervise.stall.startup import StartupProbe
from hangwatch.supervise.stall.suspect import SuspectJudge

if TYPE_CHECKING:
    from hangwatch.recover.terminate import Termination

# Capture, diagnosis and node coordination are imported where they are first needed: a job that
# never stalls does not pay for them when hangwatch starts.

log = logging.getLogger(__name__)

PAUSE_GAP_S = 5.0  # a round's wait that took this much longer: the loop was paused, not slow
POLL_S = 0.25
STOP_POLL_S = 0.05  # a budget stop waiting for the checkpoint's end: it lands within a step of a fast job, not 5
# A job that progresses, with a history of its steps, needs no more than two rounds a second (``_at_rest``): its
# stall clock counts in tens of seconds, the kernel's stillness is read once a second, and the detector keeps its
# heartbeats' intervals whatever the rate.
REST_POLL_S = 0.5
# The job's tree walked (every pid's stat file) while it progresses, as long as none of its processes ended (new
# workers of a new epoch replace the last one's) and the kernel's view does not find it quiet (a look may follow:
# the tree it looks at must be the one that is there); its exit walks it at once.
REST_SCAN_S = 5.0
# A job hangwatch attached to is judged on proof only (no clock, no history to keep): a round every 2 s (the kernel's
# view still calls for a look 3 s into a stillness, at the next round), its tree walked every ATTACHED_SCAN_S while
# nothing in it ends. bench/agent.py, 8 jobs: 2.2 % of a core at 0.5 s, 1.2 % at 1 s, 0.86 % at 2 s
ATTACHED_POLL_S = 2.0
ATTACHED_SCAN_S = 10.0
SCAN_EVERY_S = 2.0
FIRST_SCAN_S = 0.5  # the job's tree is first read this long after launch (a job that ends sooner: at its end)
PAGE_AFTER_S = 60.0  # a clean run shorter than this gets no report.html at its end (`report --html` makes one)
MAX_INTERNAL_ERRORS = 5  # rounds in a row that fail before supervision gives up (and ends the job)
WATCHDOG_S = float(os.environ.get("HANGWATCH_WATCHDOG_S", "60"))  # a round slower than this is reported


def open_run(cfg: RunConfig, clock: Clock) -> RunContext:
    """The run's records opened (the run directory, output.log), nothing launched yet."""
    notifier = Notifier(list(cfg.notify))  # validates the URLs before anything is created
    rundir = RunDir(cfg.run_dir)
    output = OutputLog(rundir.open_output_log(), rundir.layout.output_log, cfg.log_max_size, cfg.log_keep)
    return RunContext(
        cfg=cfg,
        clock=clock,
        rundir=rundir,
        notifier=notifier,
        output=output,
        status=StatusLine(enabled=sys.stderr.isatty()),
        intake=ProgressIntake(cfg.progress_regex, rundir.heartbeat_dir, to_clock=clock.from_wall),
        ledger=Ledger(clock.now(), cfg.cost_per_hour),
        policy=RestartPolicy(cfg.max_restarts),
        remedies=RemedyPlan(custom=dict(cfg.remedies)),
        hangs=earlier_hangs(cfg.run_dir),
    )


def take_progress(ctx: RunContext, tracker: Tracker, a: Attempt, intake: Intake) -> None:
    """A poll's progress signals, each into the attempt's detector and then the tracker's books, and the phase a
    heartbeat declared."""
    det = a.detector
    for p in intake.signals:
        was, counted = det.state, det.progress(p)
        if counted:  # what the suspect round said of the stall is over
            a.suspicion.note, a.suspicion.waiting_since = None, None
        tracker.took(a, p, was, counted)
    det.set_phase(intake.phase, intake.phase_deadline, intake.phase_started, ctx.clock.now())


def looker(ctx: RunContext, capturer: Capturer, tracker: Tracker) -> Looker:
    """The one look every judge takes (stall/look.py): capture, diagnose, then what arrived meanwhile, taken."""

    def look(a: Attempt, window: float | None) -> Look | Unseen:
        seen = capture_and_diagnose(ctx, capturer, a, window)
        if isinstance(seen, Unseen):
            return seen
        was = a.detector.state
        intake = ctx.intake.poll()
        take_progress(ctx, tracker, a, intake)
        return Look(seen[0], seen[1], what_moved(intake, was, a.detector.state))

    return look


def end_job(ctx: RunContext, a: Attempt, reason: str, first: int = signal.SIGTERM) -> Termination:
    """End the attempt's whole tree: ``first`` (SIGTERM), --kill-grace, then SIGKILL. Called by the loop alone
    (tests/unit/test_structure.py): a collaborator asks for it with ``EndJob``."""
    ctx.rundir.event(
        EventKind.TERMINATE,
        attempt=a.number,
        reason=reason,
        signal=signal.Signals(first).name,
        grace_seconds=ctx.cfg.kill_grace,
    )
    term = a.job.end(ctx.cfg.kill_grace, first_signal=first)
    ctx.ledger.close_stall(ctx.clock.now())
    if term.leftovers:
        ctx.say(
            f"hangwatch: processes {term.leftovers} did not die even with SIGKILL (stuck in the "
            "kernel?); check them with `ps -o pid,stat,wchan -p ...`."
        )
    return term


def end_attempt(ctx: RunContext, a: Attempt, end: EndJob) -> AttemptEnd:
    """The one way an attempt's job is ended while it runs (a hang, a signal, the budget, another node's
    decision): its tree ended, the `action` event written when asked, then how the attempt ends."""
    term = end_job(ctx, a, end.reason, end.first)
    if end.action is not None:
        ctx.rundir.event(
            EventKind.ACTION,
            attempt=a.number,
            action=end.action,
            terminated=term.terminated,
            killed=term.killed,
            leftovers=term.leftovers,
            seconds=round(term.seconds, 2),
            **dict(end.fields),
        )
    return end.then if isinstance(end.then, AttemptEnd) else end.then(a.job.poll())


def apply_outcome(acts: IncidentHandler, look: Looker, a: Attempt, outcome: Outcome) -> AttemptEnd | None:
    """What a collaborator returned, done: the detector written, then the report or the declaration's act; a look
    asked for, taken (``look``) and handed to the judge that asked; a job to end, ended. The attempt's end, if it
    ends here."""
    det, report = a.detector, None
    if outcome is None or isinstance(outcome, AttemptEnd):
        return outcome
    if isinstance(outcome, LookAt):
        return apply_outcome(acts, look, a, outcome.then(look(a, outcome.window)))
    if isinstance(outcome, EndJob):
        return end_attempt(acts.ctx, a, outcome)
    if isinstance(outcome, Declare):
        det.declare_hung()
        a.suspicion.note = None
        return apply_outcome(acts, look, a, acts.declare(outcome.judgement))
    if isinstance(outcome, Extend):
        det.extend(outcome.at, outcome.bound)
        report = outcome.report
    elif isinstance(outcome, Hold):
        det.hold_until(outcome.until)
        report = outcome.report
    elif isinstance(outcome, Report):
        report = outcome
    elif isinstance(outcome, Reopen):
        det.reopen()
    elif isinstance(outcome, CaptureNow):
        det.suspect_now()
    if report is not None:
        acts.report(report.judgement, report.when)
    return None


def _at_rest(a: Attempt) -> bool:
    """The job progresses and its detector has a history of its steps: two rounds a second are enough. Until it has
    one, four: a parsed counter counts one interval a round, and a job that spins after 2 s of steps must have a
    history to be bounded by."""
    return a.detector.state == State.PROGRESSING and len(a.detector.intervals) >= a.detector.cfg.min_history


class Supervisor:
    """Supervises one run: its attempts, their stalls, incidents and accounting."""

    def __init__(
        self,
        cfg: RunConfig,
        env: dict[str, str] | None = None,
        *,
        clock: Clock | None = None,
        launcher: Launcher | None = None,
        capture: Capture | None = None,
    ) -> None:
        self.cfg = cfg
        self.base_env = dict(os.environ if env is None else env)
        self.clock: Clock = clock or SystemClock()
        self.ctx = ctx = open_run(cfg, self.clock)
        self.intake = ctx.intake
        try:
            self.books = RunAccounts(ctx)  # checks --metrics-port before anything starts
        except BaseException:  # output.log closed, whatever stopped the start; re-raised
            ctx.output.close()
            raise
        self.capturer = Capturer(ctx, capture)
        self.tracker = Tracker(ctx)
        self.acts = IncidentHandler(ctx, self.books, self.capturer)
        self.look = looker(ctx, self.capturer, self.tracker)  # every judge's look, taken by the loop (``LookAt``)
        self.suspects = SuspectJudge(ctx, self.capturer)
        self.startup = StartupProbe(ctx, self.suspects)
        self.signals = SignalInbox(ctx)
        self.node_rounds = NodeRounds(ctx, Follower(ctx, self.acts.recorder))
        self.gpu = GpuGuard(cfg.gpu_release_timeout, cfg.relaunch_on_held_gpu, ctx.rundir.event, ctx.say)
        self.launcher: Launcher = launcher or self._launch_real
        self._round_at = time.monotonic()  # when the loop last finished a round (the watchdog reads it)
        self._watchdog_stop = threading.Event()
        self._handlers: dict[State, Callable[[Attempt, float], Outcome]] = {
            State.STARTING: self._on_waiting,
            State.PROGRESSING: self._on_waiting,
            State.SUSPECT: self.suspects.on_suspect,
            State.HUNG: self._on_hung,
        }

    @property
    def capture(self) -> Capture:
        """The capture the loop uses (injectable)."""
        return self.capturer.capture

    @capture.setter
    def capture(self, fn: Capture) -> None:
        self.capturer.capture = fn

    # --- the run -----------------------------------------------------------------------------------------
    def run(self) -> int:
        """Run attempts until the job ends, is stopped, or restarts are over; the exit status."""
        ctx, cfg = self.ctx, self.cfg
        ctx.rundir.event(
            EventKind.START,
            command=redact_argv(cfg.argv),
            run_dir=str(cfg.run_dir),
            on_hang=cfg.on_hang.value,
            min_stall=cfg.min_stall,
            startup_grace=cfg.startup_grace,
        )
        register(cfg.run_dir)  # the per-user index `hangwatch ls` reads
        self.books.write_summary(final=False)  # at once: `hangwatch ls` tells a live run by the pid in it
        watchdog = threading.Thread(target=self._watchdog, name="hangwatch-watchdog", daemon=True)
        watchdog.start()
        with self.signals.installed():
            try:
                if cfg.topology is not None:
                    self.node_rounds.connect()
                ctx.exit_code = self._run_attempts()
            except SupervisionFailed as e:
                ctx.exit_code = EXIT_SUPERVISION_FAILED
                ctx.exit_status = ExitStatus(EXIT_SUPERVISION_FAILED, ExitReason.SUPERVISION_FAILED, e.message)
                raise
            finally:
                self._close(watchdog)
        return ctx.exit_code if ctx.exit_code is not None else 1

    def _close(self, watchdog: threading.Thread) -> None:
        """The end of a run, however it ended: no job left running, every record written and closed."""
        ctx = self.ctx
        ctx.status.clear()  # the terminal is the shell's again
        for a in ctx.attempts:
            if a.job.poll() is None and a.job.owned:  # never leave a job we started running unseen
                end_job(ctx, a, reason="hangwatch exiting")
            a.job.close()
        remove_sockets_outside(ctx.rundir.heartbeat_dir)
        remove_loader_records(ctx.rundir.heartbeat_dir)
        self._watchdog_stop.set()  # after the jobs are ended: a teardown that sticks is still written down
        watchdog.join(timeout=2)
        ctx.output.flush()
        try:
            self._records_closed(ctx)
        finally:
            ctx.output.close()

    def _records_closed(self, ctx: RunContext) -> None:
        """The run's last records: the exit event and what it says, the final summary, the page."""
        ctx.notifier.flush()
        self.node_rounds.close()
        st = ctx.exit_status
        ctx.rundir.event(
            EventKind.EXIT,
            exit_code=ctx.exit_code,
            exit_reason=st.reason.value if st else None,
            why=st.why if st else None,
            requeue=st.requeue if st else None,
        )
        if st is not None and st.reason not in (ExitReason.FINISHED, ExitReason.CRASHED, ExitReason.SIGNAL):
            ctx.say(f"hangwatch: exit {st.code} ({st.reason.label}): {st.why}.")
        if ctx.ledger.heals:
            skipped = f"; {ctx.ledger.skipped_samples} sample(s) left out, listed in {ctx.rundir.layout.skipped()}"
            ctx.say(
                f"hangwatch: {ctx.ledger.heals} DataLoader worker(s) healed in place"
                + (skipped if ctx.ledger.skipped_samples else "")
                + "."
            )
        self.books.write_summary(final=True)
        ctx.rundir.close()
        self.books.close()
        self.capturer.close()
        if ctx.ledger.incidents or len(ctx.attempts) > 1 or ctx.clock.now() - ctx.ledger.started_at >= PAGE_AFTER_S:
            self.books.write_page()

    def _run_attempts(self) -> int:
        ctx = self.ctx
        while True:
            attempt = self._launch(len(ctx.attempts) + 1)
            try:
                end = self._watch(attempt)
            finally:
                attempt.ended_at = ctx.clock.now()
                self.tracker.flush_checkpoints(attempt)
                if attempt.job.poll() is not None:
                    attempt.job.close()
            # How the run ends is set here, and only here: from the attempt's end.
            attempt.exit_code = end.code
            ctx.exit_status, ctx.final_state = end.exit_status, end.final_state
            if end.restart is None:
                return end.code
            if not end.restart.restart:
                msg = end.restart.message(self.cfg.max_restarts)
                if msg is not None:
                    ctx.say(f"hangwatch: {msg}")
                    ctx.rundir.event(EventKind.GIVE_UP, reason=end.restart.give_up, attempts=attempt.number)
                return end.code
            with ctx.busy("waiting for the GPU memory of the ended job"):
                released = self.gpu.released(attempt.number, attempt.job.known_pids())
            if self.signals.pending:  # Ctrl-C or SIGTERM during the wait: stop here, launch nothing
                ctx.exit_status = job_exit(end.code, signalled=True)
                ctx.final_state = END_STATE[ctx.exit_status.reason]
                return end.code
            if not released:  # no relaunch onto a GPU still held: the run ends as this attempt did
                ctx.final_state = END_STATE.get(ctx.exit_status.reason)
                return end.code
            self.node_rounds.all_ended(attempt.number)

    def _launch_real(self, argv: list[str], env: dict[str, str], on_chunk: OnChunk) -> Job:
        return LaunchedJob(
            launch(
                argv,
                env,
                None,
                self.ctx.output,
                on_chunk,
                self.ctx.status,
                self.cfg.use_pty,
                on_close=self.ctx.wake.set,
            ),
            self.cfg.kill_grace,
            self.ctx.rundir.layout.births,
        )

    def _launch(self, n: int) -> Attempt:
        ctx, cfg = self.ctx, self.cfg
        plan = plan_attempt(ctx, n, self.base_env)
        ctx.intake.new_attempt()
        ctx.output.flush()
        log_offset = ctx.output.written
        self.gpu.setup()
        self.capturer.open_kmsg()
        remove_loader_records(ctx.rundir.heartbeat_dir)  # a killed attempt's: never read as the new one's
        job = self.launcher(plan.argv, plan.env, ctx.intake.on_chunk)
        now = ctx.clock.now()

        det = StallDetector(DetectorConfig.of(cfg, **({"max_slow": NO_CLOCK_S} if cfg.blind else {})), now)
        first_probe = min(cfg.min_stall, EARLY_LOOK_S)  # the first may decide on proof; the rest every --min-stall
        attempt = Attempt(
            n,
            plan.argv,
            now,
            job,
            det,
            action=cfg.on_hang,
            startup=StartupProbes(next_probe_at=now + first_probe),
            last_scan=now - SCAN_EVERY_S + FIRST_SCAN_S,
            log_offset=log_offset,
            resume=Resume(plan.checkpoint, plan.given),
            oom_start=cgroup_oom_kills(job.pid),
        )  # per attempt: an earlier one's OOM is not this crash's
        ctx.attempts.append(attempt)
        if n > 1:
            ctx.rundir.event(EventKind.RESTART, attempt=n, command=redact_argv(plan.argv))
            ctx.say(f"hangwatch: restarting (attempt {n}): {' '.join(redact_argv(plan.argv))}")
        ctx.rundir.event(EventKind.LAUNCH, attempt=n, pid=job.pid, command=redact_argv(plan.argv))
        return attempt

    # --- one attempt: the loop and its step ------------------------------------------------------------
    def _watchdog(self) -> None:
        """The loop's own liveness: a round that does not finish within WATCHDOG_S is written down
        (once per stall), with what the loop was doing; the loop itself bounds and abandons captures. Each second it
        also puts what a quiet job left in output.log's buffer into the file (never the loop's nor a pump's wait)."""
        reported_for = 0.0
        while not self._watchdog_stop.wait(min(1.0, WATCHDOG_S / 2)):
            self.ctx.output.flush_if_due()  # a quiet job's last bytes, into output.log (never the loop's wait)
            since = time.monotonic() - self._round_at
            if since >= WATCHDOG_S and reported_for != self._round_at:
                reported_for = self._round_at
                self.ctx.rundir.event(EventKind.WATCHDOG, seconds=round(since, 1), doing=self.ctx.doing)
                log.warning("supervision round has not finished for %.0f s (%s)", since, self.ctx.doing)

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
                self.ctx.rundir.event(
                    EventKind.INTERNAL_ERROR, attempt=a.number, error=f"{type(e).__name__}: {e}", in_a_row=failures
                )
                if failures >= MAX_INTERNAL_ERRORS:
                    raise SupervisionFailed(
                        f"supervision failed {failures} times in a row ({type(e).__name__}: "
                        f"{e}); the job was ended cleanly",
                        "Report it with the run's events.jsonl, and run again",
                    ) from e
                end = None
            if end is not None:
                return end
            # a node of a multi-node run keeps four rounds a second: the others gather its news at that pace
            stopping = self.books.budget is not None and self.books.budget.stop_pending()  # a stop waits its moment
            at_rest = _at_rest(a) and self.cfg.topology is None and not stopping
            rest = ATTACHED_POLL_S if self.cfg.blind else REST_POLL_S if at_rest else POLL_S
            rest = STOP_POLL_S if stopping else rest
            before = self.clock.now()
            self.clock.wait(self.ctx.wake, rest)
            gap = self.clock.now() - before - rest
            if gap >= PAUSE_GAP_S:
                self._paused(a, gap)
            held = account_hold(self.ctx, a, self.clock.now(), gap if gap >= PAUSE_GAP_S else 0.0)
            if held > 0:  # the reader of our own output held the job (job/held.py)
                self._shift(a, held)

    def _paused(self, a: Attempt, gap: float) -> None:
        """The loop overslept its wait by ``gap`` seconds: it (and the job) did not run. Said, written down,
        and the stall clocks restart: the paused time is not judged as a stall."""
        ctx = self.ctx
        ctx.rundir.event(EventKind.PAUSE, attempt=a.number, seconds=round(gap, 1), state=a.detector.state.value)
        ctx.say(
            f"hangwatch: paused for {gap:.0f} s (the machine or this process group was stopped); "
            "the stall clocks restart."
        )
        self._shift(a, gap)

    def _shift(self, a: Attempt, gap: float) -> None:
        """``gap`` seconds the job could not run (paused, or held by our output's reader) leave the stall clocks."""
        a.detector.shift(gap)
        a.startup.next_probe_at += gap
        if a.suspicion.waiting_since is not None:
            a.suspicion.waiting_since += gap

    def _step(self, a: Attempt) -> AttemptEnd | None:
        """One round: signals, the job's exit, progress, other nodes, then the current state's handler."""
        end = apply_outcome(self.acts, self.look, a, self.signals.handle(a))
        if end is not None:
            return end
        code = a.job.poll()
        if code is not None:
            a.job.drain(DRAIN_QUIET_S)
            self._take(a)  # the last lines the pumps read before the job ended
            a.job.scan()
            orphans = a.job.leftovers() if a.job.owned else []  # an attached job's are its own to end
            if orphans:  # e.g. a DataLoader worker stuck in user code outlives its main process
                end_job(self.ctx, a, reason="job exited, its orphans remain", first=signal.SIGKILL)
            return self.acts.job_exited(a, code, orphans)
        now = self.clock.now()
        if self.cfg.on_hang == OnHang.HEAL:  # before progress: a heal is said before the progress it brings
            apply_outcome(self.acts, self.look, a, self.acts.healer.tick(a, now))
        self._take(a)
        quiet = a.still.woken is not None or a.still.lost_one()  # the tree may have changed under a still reading
        every = SCAN_EVERY_S if quiet else ATTACHED_SCAN_S if self.cfg.blind else REST_SCAN_S
        every = every if a.detector.state == State.PROGRESSING or self.cfg.blind else SCAN_EVERY_S
        if now - a.last_scan >= every:
            a.job.scan()
            a.last_scan = now
            a.still.pids = sorted({a.job.pid, *a.job.leftovers()})  # the living tree (same pid and start time)
        a.still.scan(a.still.pids, now, a.detector.last.at if a.detector.last is not None else None)
        end = apply_outcome(self.acts, self.look, a, self.node_rounds.tick(a, now))
        if end is not None:
            return end
        end = apply_outcome(self.acts, self.look, a, self._handlers[a.detector.state](a, now))
        return apply_outcome(self.acts, self.look, a, self.books.tick(a, now, end))

    def _take(self, a: Attempt) -> None:
        """This round's progress signals and phase, and the checkpoints read a round ago."""
        take_progress(self.ctx, self.tracker, a, self.intake.poll())
        self.tracker.take_checkpoints(a)

    # --- state handlers ---------------------------------------------------------------------------------
    def _on_waiting(self, a: Attempt, now: float) -> Outcome:
        """starting / progressing: become suspect when the threshold passes; probe a job that has not
        shown progress yet every --min-stall seconds; look at once at a job the kernel shows still (every process
        waiting, no CPU, no bytes moved: supervise/job/stillness.py), where only a proof of a hang decides."""
        clock_due = self.startup.due(a, now) or self.suspects.look_due(a, now)
        if not clock_due and not a.held.holding and a.still.look_due(now):  # (the clock's look is taken below)
            a.still.looked(now, self.cfg.min_stall)
            if self.startup.due(a, now, still=True):
                outcome = self.startup.probe(a, now, still=True)
            elif a.detector.state == State.PROGRESSING:
                outcome = self.suspects.look(a, now, still=True)
            else:
                outcome = None
            end = apply_outcome(self.acts, self.look, a, outcome)
            if end is not None or a.detector.state not in (State.STARTING, State.PROGRESSING):
                return end
        if self.startup.due(a, now):
            end = apply_outcome(self.acts, self.look, a, self.startup.probe(a, now))
            if end is not None or a.detector.state != State.STARTING:
                return end
        if self.suspects.look_due(a, now):
            end = apply_outcome(self.acts, self.look, a, self.suspects.look(a, now))
            if end is not None or a.detector.state != State.PROGRESSING:
                return end
        suspect = a.detector.check(now)
        while a.detector.handovers:
            was, now_signal, _ = a.detector.handovers.pop(0)
            self.ctx.rundir.event(
                EventKind.HANDOVER,
                attempt=a.number,
                signal_from=was.name.lower(),
                signal_to=now_signal.name.lower(),
                reason="heartbeats stopped while the log counter advanced",
            )
        if suspect:
            return self.suspects.on_suspect(a, now)
        return None

    def _on_hung(self, a: Attempt, now: float) -> AttemptEnd | None:
        """hung and reported (the job was left running): progress brings it back, nothing else to do."""
        return None
