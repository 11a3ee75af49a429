"""Coordination with the other nodes of a multi-node job: liveness, capture requests, merged
evidence, and one decision per attempt. The store transport is ``supervise/nodes/store.py``."""

from __future__ import annotations

import socket
from typing import Any

from hangwatch.diagnose import Diagnosis
from hangwatch.diagnose.nodes import merge_nodes, rank_summaries
from hangwatch.diagnose.verdict import by_end
from hangwatch.records.evidence import Evidence
from hangwatch.records.incident import Finding
from hangwatch.records.run import CaptureRequest, DecidedFinding, Decision, NodeLive, NodeSummary, OnHang
from hangwatch.records.values import frozen
from hangwatch.supervise.nodes.store import Coordinator
from hangwatch.topology import Topology

NODE_SUMMARY_WAIT_S = 8.0  # beyond the capture window: how long to wait for the other nodes' summaries
LIVE_EVERY = 10  # rounds between liveness messages (with COORD_EVERY_S 0.5 s: every 5 s)
# How long node 0 keeps serving the store after its own run ended, for nodes that have not read the last
# decision yet: a capture window and the wait for the nodes' summaries, and a few rounds.
LEAVE_WAIT_S = 20.0
ENDED_WAIT_S = 60.0  # plus --kill-grace: how long a node waits for the others to end an attempt before the next


@frozen
class Merged:
    """This node's diagnosis merged with every node's summary, and who reported."""

    diagnosis: Diagnosis
    reported: tuple[int, ...]
    cause: str | None  # the merged finding's cause, when the nodes' summaries named one


class NodeCoordination:
    """One node's side of the coordination."""

    def __init__(self, coordinator: Coordinator) -> None:
        self.coord = coordinator
        self._news_seen: int | None = None  # the store's news counter at the last look
        self._shared: set[int] = set()  # attempts this node shared its summary for

    @classmethod
    def connect(cls, topo: Topology, timeout_s: float) -> NodeCoordination:
        """Host (node 0) or reach the store; raises UsageError when it cannot be reached."""
        return cls(Coordinator(topo, timeout_s))

    @property
    def node(self) -> int:
        """This node's rank."""
        return self.coord.node

    def tick(self, attempt: int, state: str, step: int | None, now: float) -> Decision | CaptureRequest | None:
        """Publish liveness; return another node's decision to act on, or its request to capture. Looks
        for them only when the store's news counter moved (one message a round otherwise)."""
        stats = self.coord.stats
        if stats.rounds % LIVE_EVERY == 0:
            self.coord.publish(("live", self.node), NodeLive(now, attempt, state, step), purpose="tick")
        stats.rounds += 1
        news = self.coord.news()
        if news is not None and news == self._news_seen:
            return None
        decided = self.coord.read(("decision", attempt), Decision, purpose="tick")
        if decided is not None and decided.by != self.node and decided.action != OnHang.REPORT:
            return decided
        asked = self.coord.read(("capture", attempt), CaptureRequest, purpose="tick")
        unanswered = asked is not None and asked.by != self.node and attempt not in self._shared
        if not unanswered:  # a request this node has not answered yet: keep looking at it every round
            self._news_seen = news  # (a "report" that becomes a kill is news of its own)
        return asked if asked is not None and asked.by != self.node else None

    def merge(self, attempt: int, evidence: Evidence, diagnosis: Diagnosis, window_s: float, now: float) -> Merged:
        """Share this node's rank summary, ask the others to capture, merge every node's summary."""
        self.share(attempt, evidence, diagnosis, now, request=True)
        summaries = self.coord.gather(attempt, window_s + NODE_SUMMARY_WAIT_S)
        named = merge_nodes(summaries, self.coord.topo.nnodes)
        if named is None:
            return Merged(diagnosis, tuple(sorted(summaries)), None)
        merged = by_end(named)  # the verdict stage: what the ranks the others wait for were measured doing
        return Merged(
            Diagnosis(merged.verdict or diagnosis.verdict, (merged.finding, *diagnosis.findings)),
            tuple(sorted(summaries)),
            merged.finding.cause,
        )

    def share(self, attempt: int, evidence: Evidence, diagnosis: Diagnosis, now: float, request: bool) -> None:
        """This node's rank summary for ``attempt`` (the newest replaces the last; counted once), and with
        ``request`` a capture request if none was made. A node asked to capture answers even when its
        own job turns out alive, so that nobody waits for it."""
        first = attempt not in self._shared
        self._shared.add(attempt)
        self.coord.share_summary(
            attempt,
            NodeSummary(socket.gethostname(), rank_summaries(evidence), diagnosis.verdict.value, diagnosis.root.cause),
            count=first,
        )
        if request and self.coord.read(("capture", attempt), CaptureRequest) is None:
            self.coord.publish(("capture", attempt), CaptureRequest(self.node, now))

    def leave(self, wait_s: float) -> None:
        """This node's run is over (node 0 serves the store until the others have left, up to ``wait_s``)."""
        self.coord.leave(wait_s)

    def all_ended(self, attempt: int, wait_s: float) -> bool:
        """This node's part of ``attempt`` ended; True once every node's has (up to ``wait_s``)."""
        return self.coord.all_ended(attempt, wait_s)

    def share_finding(self, attempt: int, finding: Finding) -> None:
        """This node's root finding, before it proposes a decision (no news: nobody needs to look for it)."""
        self.coord.publish(("finding", attempt, self.node), DecidedFinding(finding.to_dict()), news=False)

    def finding_of(self, attempt: int, node: int) -> dict[str, Any] | None:
        """The root finding ``node`` stored with its proposal for ``attempt`` (its JSON object), if any."""
        got = self.coord.read(("finding", attempt, node), DecidedFinding)
        return got.finding if got is not None else None

    def decide(self, attempt: int, proposal: Decision) -> Decision:
        """Propose; the first proposal stored for this attempt wins on every node."""
        return self.coord.decide(attempt, proposal)
