"""The store the hangwatches of a multi-node job share: torch.distributed's TCPStore, typed messages.

Node 0's hangwatch hosts the store (next to the job's own master port); every node's hangwatch
connects to it. Needs torch (the job already has it); nothing here runs without a multi-node job.
If the store goes away, each node carries on alone.
"""

from __future__ import annotations

import json
import logging
import os
import time
from datetime import timedelta

from hangwatch.errors import UsageError
from hangwatch.records.run import Decision, M, Message, NodeSummary
from hangwatch.supervise.topology import Topology

log = logging.getLogger(__name__)
PREFIX = "hangwatch"
POLL_S = 0.2


class Coordinator:
    """Reads and writes messages under ``hangwatch/...`` keys; marks itself lost on any store error."""

    def __init__(self, topo: Topology, connect_timeout_s: float) -> None:
        self.topo = topo
        self.node = topo.node_rank
        self.lost = False
        os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")  # c10d's connect retries are not for users
        try:
            from torch.distributed import TCPStore  # type: ignore[attr-defined,unused-ignore]  # re-exported from torch._C
        except ImportError as e:
            raise UsageError("coordinating a multi-node job needs torch in hangwatch's environment",
                             "Install hangwatch into the job's environment (pip install 'hangwatch[torch]')") from e
        try:
            self.store = TCPStore(topo.host, topo.port, None, topo.node_rank == 0,
                                  timedelta(seconds=connect_timeout_s), wait_for_workers=False)
        except Exception as e:  # torch raises DistNetworkError / RuntimeError subclasses
            raise UsageError(f"cannot reach the coordination store at {topo.endpoint} ({type(e).__name__})",
                             "Start node 0's hangwatch, check the host and that the port is free and reachable") from e

    @staticmethod
    def _key(parts: tuple[object, ...]) -> str:
        return "/".join([PREFIX, *map(str, parts)])

    def _lose(self, e: Exception) -> None:
        log.warning("coordination store unreachable (%s); continuing without other nodes", e, exc_info=True)
        self.lost = True

    def publish(self, key: tuple[object, ...], message: Message) -> None:
        """Store ``message`` under ``key`` (nothing once the store is lost)."""
        if self.lost:
            return
        try:
            self.store.set(self._key(key), json.dumps(message.to_dict()))
        except Exception as e:  # noqa: BLE001 - torch raises many kinds; the host node went away: carry on alone
            self._lose(e)

    def read(self, key: tuple[object, ...], kind: type[M]) -> M | None:
        """The message stored under ``key``, if any."""
        if self.lost:
            return None
        try:
            k = self._key(key)
            if not self.store.check([k]):
                return None
            return kind.from_dict(json.loads(self.store.get(k)))
        except (ValueError, TypeError):
            log.warning("ignoring a malformed coordination message under %s", key)
            return None
        except Exception as e:  # noqa: BLE001 - as above
            self._lose(e)
            return None

    def gather(self, attempt: int, wait_s: float) -> dict[int, NodeSummary]:
        """Every node's summary for ``attempt``, waiting up to ``wait_s`` for the missing ones."""
        deadline = time.monotonic() + wait_s
        got: dict[int, NodeSummary] = {}
        while True:
            for n in range(self.topo.nnodes):
                if n not in got:
                    v = self.read(("summary", attempt, n), NodeSummary)
                    if v is not None:
                        got[n] = v
            if len(got) == self.topo.nnodes or time.monotonic() >= deadline or self.lost:
                return got
            time.sleep(POLL_S)

    def decide(self, attempt: int, proposal: Decision) -> Decision:
        """Propose a decision; the first proposal stored for this attempt wins on every node."""
        if self.lost:
            return proposal
        try:
            won = self.store.compare_set(self._key(("decision", attempt)), "", json.dumps(proposal.to_dict()))
            return Decision.from_dict(json.loads(won))
        except Exception as e:  # noqa: BLE001 - as above: decide alone
            self._lose(e)
            return proposal
