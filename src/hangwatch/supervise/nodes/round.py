"""The run loop's side of a multi-node job: connect to the store, then every COORD_EVERY_S seconds share
this node's news and take the others' (a decision to follow, a request to capture). The store protocol is
``nodes/protocol.py`` and ``nodes/store.py``, imported only for a multi-node job."""

from __future__ import annotations

from hangwatch.records.run import CaptureRequest, Decision, EventKind, OnHang, RunState
from hangwatch.recover.exitcode import remote_status
from hangwatch.supervise.attempt import Attempt, AttemptEnd, CaptureNow, EndJob, LookAt, Outcome
from hangwatch.supervise.context import Every, RunContext
from hangwatch.supervise.nodes.follow import Follower
from hangwatch.supervise.stall.look import Look, Unseen

COORD_EVERY_S = 0.5


class NodeRounds:
    """One node's rounds with the others."""

    def __init__(self, ctx: RunContext, follower: Follower | None = None) -> None:
        self.ctx = ctx
        self.follower = follower  # this node's incident before it follows another node's decision
        self._coord = Every(COORD_EVERY_S)

    def connect(self) -> None:
        """Host (node 0) or reach the store; the coordination goes into ``ctx.nodes``."""
        ctx, topo = self.ctx, self.ctx.cfg.topology
        assert topo is not None  # noqa: S101 - only called for a multi-node job
        timeout = max(30.0, min(ctx.cfg.startup_grace, 600.0))
        ctx.say(f"hangwatch: node {topo.node_rank} of {topo.nnodes}; coordinating through {topo.endpoint}")
        from hangwatch.supervise.nodes.protocol import NodeCoordination

        ctx.nodes = NodeCoordination.connect(topo, timeout)
        ctx.rundir.event(EventKind.COORDINATION, node=topo.node_rank, nnodes=topo.nnodes, endpoint=topo.endpoint)

    def tick(self, a: Attempt, now: float) -> Outcome:
        """Follow another node's decision (a look at this node's part for its incident, then that part ended, with
        the decider's exit), or answer its capture request (``CaptureNow``: the attempt becomes suspect, this
        round's handler captures it)."""
        ctx, nodes = self.ctx, self.ctx.nodes
        if nodes is None or not self._coord.due(now):
            return None
        called = nodes.tick(a.number, ctx.state.value, ctx.ledger.last_step, now)
        if isinstance(called, Decision) and a.job.poll() is None:
            ctx.rundir.event(EventKind.REMOTE_DECISION, attempt=a.number, **called.to_dict())
            ctx.say(
                f"hangwatch: node {called.by} decided to {called.action} the job "
                f"({called.cause}); ending this node's part."
            )
            decision = ctx.policy.decide(
                a.number,
                asked=OnHang(called.action) == OnHang.RESTART,
                progressed=a.steps.progressed,
                max_step=a.steps.max_step,
            )
            status = remote_status(called)
            end = EndJob(  # this node's run ends as the deciding node's did
                f"node {called.by} decided: {called.action}",
                AttemptEnd(status.code, decision, status),
                action=called.action,
                fields=(("remote", True),),
            )
            follower = self.follower
            if follower is None:
                return end

            def recorded(seen: Look | Unseen) -> Outcome:
                follower.record(a, called, decision.restart, seen)
                return end

            return LookAt(follower.window(), recorded)  # the loop's look at this node's part, then its incident
        if (
            isinstance(called, CaptureRequest)
            and not a.node.captured_for_peer
            and ctx.state not in (RunState.SUSPECT, RunState.HUNG)
        ):
            a.node.captured_for_peer = True
            ctx.rundir.event(EventKind.CAPTURE_REQUESTED, attempt=a.number, by=called.by)
            return CaptureNow()
        return None

    def all_ended(self, attempt: int) -> None:
        """Before a restart of a multi-node job: wait until every node has ended its part of ``attempt``."""
        nodes = self.ctx.nodes
        if nodes is None:
            return
        from hangwatch.supervise.nodes.protocol import ENDED_WAIT_S

        wait_s = ENDED_WAIT_S + self.ctx.cfg.kill_grace
        with self.ctx.busy("waiting for the other nodes to end their part of the job"):
            together = nodes.all_ended(attempt, wait_s)
        self.ctx.rundir.event(EventKind.NODES_ENDED, attempt=attempt, together=together)
        if not together:
            self.ctx.say(
                f"hangwatch: not every node ended attempt {attempt} within {wait_s:.0f} s; restarting this node anyway."
            )

    def close(self) -> None:
        """Leave (node 0 serves the store until the others have: they may still have a decision to read),
        then the store's traffic, as a `coord_stats` event."""
        nodes = self.ctx.nodes
        if nodes is not None:
            from hangwatch.supervise.nodes.protocol import LEAVE_WAIT_S

            with self.ctx.busy("waiting for the other nodes to leave"):
                nodes.leave(LEAVE_WAIT_S)
            self.ctx.rundir.event(EventKind.COORD_STATS, node=nodes.node, **nodes.coord.stats.to_dict())
