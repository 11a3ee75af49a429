"""The store the hangwatches of a multi-node job share: torch.distributed's TCPStore, typed messages.

Node 0's hangwatch hosts the store (next to the job's own master port); every node's hangwatch
connects to it. Needs torch (the job already has it); nothing here runs without a multi-node job.
If the store goes away, each node carries on alone.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import sys
import time
from datetime import timedelta
from typing import Any

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
        self.refused = False
        self.secret = (topo.token or "hangwatch").encode()
        # Keys live under a namespace derived from the token: a peer without it does not even see them.
        self.prefix = f"{PREFIX}/{hashlib.sha256(self.secret).hexdigest()[:16]}"
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
        self._hello(topo)

    def _key(self, parts: tuple[object, ...]) -> str:
        return "/".join([self.prefix, *map(str, parts)])

    def _sign(self, key: str, body: str) -> str:
        return hmac.new(self.secret, f"{key}\n{body}".encode(), hashlib.sha256).hexdigest()

    def _wrap(self, key: str, payload: dict[str, Any]) -> str:
        body = json.dumps(payload, sort_keys=True)
        return json.dumps({"mac": self._sign(key, body), "body": body})

    def _unwrap(self, key: str, raw: bytes | str) -> dict[str, Any] | None:
        """The payload if it carries this run's signature, else None (and one line about it)."""
        try:
            outer = json.loads(raw)
            body, mac = str(outer["body"]), str(outer["mac"])
        except (ValueError, KeyError, TypeError):
            body, mac = "", ""
        if not mac or not hmac.compare_digest(mac, self._sign(key, body)):
            self._refuse(f"a message under {key} is not signed with this run's token")
            return None
        value: dict[str, Any] = json.loads(body)
        return value

    def _refuse(self, what: str) -> None:
        if not self.refused:
            self.refused = True
            log.warning("hangwatch: %s; ignoring it. Set the same --coord-token (or HANGWATCH_COORD_TOKEN) on "
                        "every node.", what)

    def _hello(self, topo: Topology) -> None:
        """Node 0 signs the store; every other node checks it holds the same token before trusting it."""
        key = f"{PREFIX}/hello"
        try:
            if topo.node_rank == 0:
                self.store.set(key, self._wrap(key, {"host": topo.host}))
                return
            self.store.wait([key], timedelta(seconds=30))
            if self._unwrap(key, self.store.get(key)) is None:
                self.lost = True
                sys.stderr.write(f"hangwatch: the coordination store at {topo.endpoint} belongs to a run with "
                                 "another token; this node carries on alone. Set the same --coord-token (or "
                                 "HANGWATCH_COORD_TOKEN) on every node.\n")
        except Exception as e:  # noqa: BLE001 - torch raises many kinds: carry on alone
            self._lose(e)

    def _lose(self, e: Exception) -> None:
        log.warning("coordination store unreachable (%s); continuing without other nodes", e, exc_info=True)
        self.lost = True

    def publish(self, key: tuple[object, ...], message: Message) -> None:
        """Store ``message`` under ``key`` (nothing once the store is lost)."""
        if self.lost:
            return
        try:
            k = self._key(key)
            self.store.set(k, self._wrap(k, message.to_dict()))
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
            payload = self._unwrap(k, self.store.get(k))
            return None if payload is None else kind.from_dict(payload)
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
        """Propose a decision; the first proposal stored for this attempt wins on every node, except that
        a "report" decides nothing for good: a later kill or restart (the job crashed, a budget stop)
        replaces it, or the other nodes' ranks would wait for ever on the ones that ended."""
        if self.lost:
            return proposal
        try:
            k = self._key(("decision", attempt))
            mine = self._wrap(k, proposal.to_dict())
            won = self.store.compare_set(k, "", mine)
            payload = self._unwrap(k, won)
            if payload is not None and payload.get("action") == "report" and proposal.action != "report":
                stored = won.decode() if isinstance(won, bytes) else won
                won = self.store.compare_set(k, stored, mine)  # swapped only if no other node got there first
                payload = self._unwrap(k, won)
            return proposal if payload is None else Decision.from_dict(payload)
        except Exception as e:  # noqa: BLE001 - as above: decide alone
            self._lose(e)
            return proposal
