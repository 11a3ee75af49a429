"""Coordination between the hangwatches of a multi-node job, through torch.distributed's TCPStore.

Node 0's hangwatch hosts the store (next to the job's own master port); every node's hangwatch
connects to it. Through it they share liveness, ask each other to capture, exchange evidence
summaries, and agree on one decision (kill / restart) per attempt, so every node acts together.
Needs torch (the job already has it); nothing here runs without a multi-node job.
"""

from __future__ import annotations

import json
import logging
import os
import time
from datetime import timedelta
from typing import Any

from hangwatch.errors import UsageError
from hangwatch.supervise.topology import Topology

log = logging.getLogger(__name__)
PREFIX = "hangwatch"
POLL_S = 0.2


class Coordinator:
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

    def _key(self, *parts: object) -> str:
        return "/".join([PREFIX, *map(str, parts)])

    def _set(self, key: str, value: dict[str, Any]) -> None:
        if self.lost:
            return
        try:
            self.store.set(key, json.dumps(value))
        except Exception:  # the host node went away: carry on alone
            log.warning("coordination store unreachable; continuing without other nodes", exc_info=True)
            self.lost = True

    def _get(self, key: str) -> dict[str, Any] | None:
        if self.lost:
            return None
        try:
            if not self.store.check([key]):
                return None
            value: dict[str, Any] = json.loads(self.store.get(key))
            return value
        except Exception:
            log.warning("coordination store unreachable; continuing without other nodes", exc_info=True)
            self.lost = True
            return None

    # --- liveness ---------------------------------------------------------------------------------
    def publish_live(self, attempt: int, state: str, step: int | None) -> None:
        self._set(self._key("live", self.node), {"at": time.time(), "attempt": attempt, "state": state, "step": step})

    def live(self) -> dict[int, dict[str, Any]]:
        out = {}
        for n in range(self.topo.nnodes):
            v = self._get(self._key("live", n))
            if v is not None:
                out[n] = v
        return out

    # --- capture requests and evidence summaries ------------------------------------------------------
    def request_capture(self, attempt: int) -> None:
        if self._get(self._key("capture", attempt)) is None:
            self._set(self._key("capture", attempt), {"by": self.node, "at": time.time()})

    def capture_requested(self, attempt: int) -> dict[str, Any] | None:
        v = self._get(self._key("capture", attempt))
        return v if v is not None and v.get("by") != self.node else None

    def publish_summary(self, attempt: int, summary: dict[str, Any]) -> None:
        self._set(self._key("summary", attempt, self.node), summary)

    def gather_summaries(self, attempt: int, wait_s: float) -> dict[int, dict[str, Any]]:
        """Every node's summary for ``attempt``, waiting up to ``wait_s`` for the missing ones."""
        deadline = time.monotonic() + wait_s
        got: dict[int, dict[str, Any]] = {}
        while True:
            for n in range(self.topo.nnodes):
                if n not in got:
                    v = self._get(self._key("summary", attempt, n))
                    if v is not None:
                        got[n] = v
            if len(got) == self.topo.nnodes or time.monotonic() >= deadline or self.lost:
                return got
            time.sleep(POLL_S)

    # --- one decision per attempt ------------------------------------------------------------------------
    def decide(self, attempt: int, proposal: dict[str, Any]) -> dict[str, Any]:
        """Propose a decision; the first proposal stored for this attempt wins on every node."""
        if self.lost:
            return proposal
        key = self._key("decision", attempt)
        try:
            won = self.store.compare_set(key, "", json.dumps(proposal))
            decision: dict[str, Any] = json.loads(won)
            return decision
        except Exception:
            log.warning("coordination store unreachable; deciding alone", exc_info=True)
            self.lost = True
            return proposal

    def decision(self, attempt: int) -> dict[str, Any] | None:
        return self._get(self._key("decision", attempt))
