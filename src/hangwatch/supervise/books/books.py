"""The run's books, kept every round: summary.json, the status line, the metrics, report.html, and the
two projections that can end a run early, the budget (--budget) and the deadline (--deadline)."""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from hangwatch.atomic import write_text_atomic
from hangwatch.records.layout import command_name
from hangwatch.records.run import EventKind, OnHang, RunState, RunSummary
from hangwatch.recover.exitcode import EXIT_STOPPED, ExitReason, stopped_exit
from hangwatch.redact import redact_argv
from hangwatch.supervise.attempt import Attempt, AttemptEnd, EndJob
from hangwatch.supervise.books.accounting import attempt_stats, remedy_outcomes
from hangwatch.supervise.books.budget import BudgetWatch, over_budget_text
from hangwatch.supervise.books.deadline import HOLD_S, DeadlineWatch, with_deadline
from hangwatch.supervise.context import Every, RunContext

if TYPE_CHECKING:
    from hangwatch.supervise.books.metrics import Metrics

log = logging.getLogger(__name__)

SUMMARY_EVERY_S = 2.0  # `hangwatch ls` and `watch` read it: their news is at most this old
ATTACHED_SUMMARY_EVERY_S = 5.0  # a job attached to (a node's agent watches many): judged on proof, not on seconds
STATUS_EVERY_S = 1.0


class RunAccounts:
    """Accounting and its views, for one run."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        cfg = ctx.cfg
        self.metrics = self._metrics() if cfg.metrics_port is not None or cfg.metrics_textfile else None
        # A projection is noisy: --on-over-budget stop waits until it has stayed over for --min-stall.
        self.budget = (
            BudgetWatch(cfg.budget, cfg.stop_over_budget, hold_s=cfg.min_stall) if cfg.budget is not None else None
        )
        # Like the budget: a crossing counts once it has held for --min-stall (<= 30 s).
        self.deadline = (
            DeadlineWatch(cfg.deadline, hold_s=min(HOLD_S, cfg.min_stall)) if cfg.deadline is not None else None
        )
        self.known_rate: float | None = None  # the newest step rate and total a summary had (for remedy choice)
        self.known_total: int | None = None
        self._summary, self._status, self._deadline = (
            Every(ATTACHED_SUMMARY_EVERY_S if cfg.blind else SUMMARY_EVERY_S),
            Every(STATUS_EVERY_S),
            Every(STATUS_EVERY_S),
        )

    def _metrics(self) -> Metrics:
        """--metrics-port / --metrics-textfile, checked (port free, library there) before anything starts."""
        from hangwatch.supervise.books.metrics import Metrics

        cfg, topo = self.ctx.cfg, self.ctx.cfg.topology
        m = Metrics(
            cfg.metrics_port,
            cfg.metrics_textfile,
            cfg.run_label or cfg.run_dir.name,
            str(topo.node_rank) if topo is not None else "0",
            os.uname().nodename,
            command_name(cfg.argv),
        )
        if m.port is not None:
            self.ctx.say(f"hangwatch: metrics at http://{os.uname().nodename}:{m.port}/metrics")
        return m

    def summary(self, final: bool) -> RunSummary:
        """The run's accounting as of now."""
        ctx = self.ctx
        det = ctx.attempts[-1].detector if ctx.attempts else None
        last = det.last.at if det is not None and det.last is not None else None
        st = ctx.exit_status if final else None
        summary = ctx.ledger.summary(
            ctx.clock.now(),
            command=redact_argv(ctx.cfg.argv),
            run_dir=str(ctx.cfg.run_dir),
            state=ctx.state,
            attempts=len(ctx.attempts),
            exit_code=ctx.exit_code,
            final=final,
            rate=det.step_rate() if det else None,
            total=ctx.total()[0],
        )
        summary = dataclasses.replace(
            summary,
            remedies=remedy_outcomes(ctx.attempts, ctx.remedies.applied),
            attempt_stats=attempt_stats(ctx.attempts, [f.args for f in ctx.cfg.fallbacks], ctx.remedies.applied),
            budget_usd=ctx.cfg.budget,
            last_progress_at=None if last is None else round(last, 3),
            note=ctx.attempts[-1].suspicion.note if ctx.attempts else None,
            history=det.history_summary() if det is not None else None,
            checkpoint=ctx.checkpoints[-1].to_dict() if ctx.checkpoints else None,
            host=os.uname().nodename,
            supervisor_pid=os.getpid(),
            updated_at=round(ctx.clock.now(), 3),
            exit_reason=st.reason.value if st else None,
            exit_why=st.why if st else None,
            requeue=st.requeue if st else None,
        )
        if ctx.cfg.deadline is None:
            return summary

        return with_deadline(summary, ctx.cfg.deadline, ctx.clock.now())

    def write_summary(self, final: bool) -> None:
        """summary.json (and the metrics' snapshot) as of now; a failure is logged, never raised."""
        ctx = self.ctx
        self._summary.at = ctx.clock.now()
        try:
            summary = self.summary(final)
            ctx.rundir.write_summary(summary)
            self.known_rate = summary.steps_per_s or self.known_rate
            self.known_total = summary.total_steps or self.known_total
            if self.metrics is not None:
                from hangwatch.supervise.books.metrics import Snapshot

                self.metrics.update(
                    Snapshot(
                        summary,
                        ctx.attempts[-1].started_at if ctx.attempts else None,
                        ctx.intake.rank_progress(),
                        tuple((c, v, n) for (c, v), n in sorted(ctx.incident_counts.items())),
                    )
                )
        except Exception:  # accounting must not stop supervision
            log.exception("could not write summary.json")

    def write_page(self) -> Path | None:
        """report.html in the run directory (the page `hangwatch report --html` makes, rendered from what the run
        keeps in memory, not read back from its files), or None if it failed."""
        try:
            from hangwatch.report.html import render_html

            path = self.ctx.rundir.layout.page
            write_text_atomic(path, render_html(self.ctx.rundir.run_record(), self.ctx.cfg.run_dir))
            return path
        except Exception:  # the page is a view; it must not stop supervision
            log.exception("could not write report.html")
            return None

    def tick(self, a: Attempt, now: float, end: AttemptEnd | None) -> AttemptEnd | EndJob | None:
        """The round's bookkeeping: summary and status line when due; the budget and the deadline while
        the attempt goes on (``end``: how the round's state handler ended it, if it did)."""
        ctx = self.ctx
        if self._summary.due(now):
            self.write_summary(final=False)
        if ctx.status.enabled and self._status.due(now):
            from hangwatch.report.banner import status_line  # on a terminal only

            note = a.suspicion.note or (a.startup.note if ctx.state == RunState.STARTING else None)
            ctx.status.show(status_line(self.summary(final=False), a.detector.stalled_for(now), note))
        if end is not None:
            return end
        if self.budget is not None:
            stop = self._budget_tick(a, self.budget, now)
            if stop is not None:
                return stop
        self._deadline_tick(a, now)
        return None

    def _budget_tick(self, a: Attempt, budget: BudgetWatch, now: float) -> EndJob | None:
        """Warn once when the projected total passes --budget; with --on-over-budget stop, end the job
        (after its next checkpoint when one was seen)."""
        ctx = self.ctx
        budget.phase(a.detector.phase_name, now)
        text = budget.warning(self.summary(final=False), now)
        if text is not None:
            hold = f"if it stays over for {budget.hold_s:.0f} s"
            then = (
                f" stopping the job after its next checkpoint {hold}"
                if budget.waiting_for_checkpoint()
                else f" stopping the job {hold}"
                if budget.stop
                else ""
            )
            ctx.rundir.event(EventKind.OVER_BUDGET, attempt=a.number, text=text, stop=budget.stop)
            ctx.say(f"hangwatch: over budget: {text}" + (f";{then}." if then else "."))
            ctx.notifier.send(f"hangwatch: {command_name(ctx.cfg.argv)} over budget", text)
        if not budget.stop_now(now, a.started_at):
            return None
        if not ctx.total()[1]:
            if not budget.untrusted_noted:
                budget.untrusted_noted = True
                ctx.say(
                    "hangwatch: over budget, but the job is not stopped: its total steps come from a "
                    "progress bar in the log, which may not be the training's. Pass --total-steps N."
                )
            return None

        text = over_budget_text(self.summary(final=False), budget.budget) or f"over the ${budget.budget:.2f} budget"
        status = stopped_exit(ExitReason.OVER_BUDGET, f"stopped over budget ({text})")
        # Every node's ranks stop together, or the others hang in their collectives (another node's exit wins).
        status = ctx.agree(a.number, OnHang.KILL, status, "over_budget")[1] or status
        after = " after its checkpoint" if budget.checkpoint_ended() else ""
        ctx.say(f"hangwatch: over budget: ending the job{after} (--on-over-budget stop).")
        return EndJob("over budget (--on-over-budget stop)", AttemptEnd(EXIT_STOPPED, None, status))

    def _deadline_tick(self, a: Attempt, now: float) -> None:
        """Warn when the projected finish crosses --deadline (once it has held a while), and again when it
        comes back before it."""
        ctx = self.ctx
        if self.deadline is None or not self._deadline.due(now):
            return
        text = self.deadline.news(self.summary(final=False), now)
        if text is None:
            return
        meets = self.deadline.meets
        ctx.rundir.event(EventKind.DEADLINE, attempt=a.number, text=text, meets=meets)
        ctx.say(f"hangwatch: {text}.")
        ctx.notifier.send(
            f"hangwatch: {command_name(ctx.cfg.argv)} {'back on time' if meets else 'projected to miss its deadline'}",
            text,
        )

    def close(self) -> None:
        """The metrics server (and its last textfile), once the run has ended."""
        if self.metrics is not None:
            self.metrics.close()
