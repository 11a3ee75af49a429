"""Coordination with the other nodes of a multi-node job: liveness, capture requests, merged
evidence, and one decision per attempt. The store transport is ``supervise/coord.py``."""

from __future__ import annotations

import socket
from dataclasses import dataclass

from hangwatch.diagnose import Diagnosis
from hangwatch.diagnose.distributed import merge_nodes, rank_summaries
from hangwatch.evidence import Evidence
from hangwatch.incident import Verdict
from hangwatch.records.run import CaptureRequest, Decision, NodeLive, NodeSummary
from hangwatch.supervise.coord import Coordinator
from hangwatch.supervise.topology import Topology

NODE_SUMMARY_WAIT_S = 8.0  # beyond the capture window: how long to wait for the other nodes' summaries


@dataclass(frozen=True)
class Merged:
    """This node's diagnosis merged with every node's summary, and who reported."""

    diagnosis: Diagnosis
    reported: tuple[int, ...]
    cause: str | None  # the merged finding's cause, when the nodes' summaries named one


class NodeCoordination:
    """One node's side of the coordination."""

    def __init__(self, coordinator: Coordinator) -> None:
        self.coord = coordinator

    @classmethod
    def connect(cls, topo: Topology, timeout_s: float) -> NodeCoordination:
        """Host (node 0) or reach the store; raises UsageError when it cannot be reached."""
        return cls(Coordinator(topo, timeout_s))

    @property
    def node(self) -> int:
        """This node's rank."""
        return self.coord.node

    def tick(self, attempt: int, state: str, step: int | None, now: float) -> Decision | CaptureRequest | None:
        """Publish liveness; return another node's decision to act on, or its request to capture."""
        self.coord.publish(("live", self.node), NodeLive(now, attempt, state, step))
        decided = self.coord.read(("decision", attempt), Decision)
        if decided is not None and decided.by != self.node and decided.action != "report":
            return decided
        asked = self.coord.read(("capture", attempt), CaptureRequest)
        return asked if asked is not None and asked.by != self.node else None

    def merge(self, attempt: int, evidence: Evidence, diagnosis: Diagnosis, window_s: float,
              now: float) -> Merged:
        """Share this node's rank summary, ask the others to capture, merge every node's summary."""
        root = diagnosis.findings[0]
        self.coord.publish(("summary", attempt, self.node),
                           NodeSummary(socket.gethostname(), rank_summaries(evidence), diagnosis.verdict.value,
                                       root.cause))
        if self.coord.read(("capture", attempt), CaptureRequest) is None:
            self.coord.publish(("capture", attempt), CaptureRequest(self.node, now))
        summaries = self.coord.gather(attempt, window_s + NODE_SUMMARY_WAIT_S)
        merged = merge_nodes(summaries, self.coord.topo.nnodes)
        if merged is None:
            return Merged(diagnosis, tuple(sorted(summaries)), None)
        return Merged(Diagnosis(Verdict.HUNG, (merged, *diagnosis.findings)), tuple(sorted(summaries)), merged.cause)

    def decide(self, attempt: int, proposal: Decision) -> Decision:
        """Propose; the first proposal stored for this attempt wins on every node."""
        return self.coord.decide(attempt, proposal)
