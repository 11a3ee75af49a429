"""The store the hangwatches of a multi-node job share: torch.distributed's TCPStore, typed messages.

Node 0's hangwatch hosts the store (next to the job's own master port); every node's hangwatch
connects to it. Needs torch (the job already has it); nothing here runs without a multi-node job.
If the store goes away, each node carries on alone.

What each node sends does not grow with the node count: a round is one ``set`` (liveness, every
``LIVE_EVERY`` rounds) and one read of the news counter; only when it moved does a node look for
a decision or a capture request. Gathering the nodes' summaries polls one counter, then reads them all
in one ``multi_get``. ``stats`` counts messages and bytes by purpose (``bench/scale.py`` reports them).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import field
from datetime import timedelta
from typing import Any, TypeVar

from hangwatch.errors import UsageError
from hangwatch.records.run import Decision, M, Message, NodeSummary, OnHang
from hangwatch.records.values import mutable
from hangwatch.topology import Topology

log = logging.getLogger(__name__)
PREFIX = "hangwatch"
NEWS = ("news",)  # a counter bumped by every message worth a look (requests, summaries, decisions)
POLL_S = 0.2
T = TypeVar("T")


@mutable
class StoreStats:
    """Messages to the store and bytes each way, by purpose (``tick``, ``incident``, ``membership``: joining
    and leaving), and rounds."""

    rounds: int = 0
    ops: dict[str, int] = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)

    def count(self, purpose: str, nbytes: int) -> None:
        """One message of ``nbytes`` (key and value, both ways)."""
        self.ops[purpose] = self.ops.get(purpose, 0) + 1
        self.bytes[purpose] = self.bytes.get(purpose, 0) + nbytes

    def to_dict(self) -> dict[str, Any]:
        """For the run's events: totals, and per round while nothing was wrong."""
        rounds = max(1, self.rounds)
        return {
            "rounds": self.rounds,
            "ops": dict(self.ops),
            "bytes": dict(self.bytes),
            "tick_ops_per_round": round(self.ops.get("tick", 0) / rounds, 2),
            "tick_bytes_per_round": round(self.bytes.get("tick", 0) / rounds, 1),
        }


class Coordinator:
    """Reads and writes messages under ``hangwatch/...`` keys; marks itself lost on any store error."""

    def __init__(self, topo: Topology, connect_timeout_s: float) -> None:
        self.topo = topo
        self.node = topo.node_rank
        self.lost = False
        self.refused = False
        self.stats = StoreStats()
        self.secret = (topo.token or "hangwatch").encode()
        # Keys live under a namespace derived from the token: a peer without it does not even see them.
        self.prefix = f"{PREFIX}/{hashlib.sha256(self.secret).hexdigest()[:16]}"
        os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")  # c10d's connect retries are not for users
        try:
            from torch.distributed import TCPStore  # type: ignore[attr-defined,unused-ignore]  # re-exported from torch._C
        except ImportError as e:
            raise UsageError(
                "coordinating a multi-node job needs torch in hangwatch's environment",
                "Install hangwatch into the job's environment (pip install 'hangwatch[torch]')",
            ) from e
        try:
            self.store = TCPStore(
                topo.host,
                topo.port,
                None,
                topo.node_rank == 0,
                timedelta(seconds=connect_timeout_s),
                wait_for_workers=False,
            )
        except Exception as e:  # torch raises DistNetworkError / RuntimeError subclasses
            raise UsageError(
                f"cannot reach the coordination store at {topo.endpoint} ({type(e).__name__})",
                "Start node 0's hangwatch, check the host and that the port is free and reachable",
            ) from e
        self._hello(topo)
        self._count(("joined",), 1)

    def _count(self, key: tuple[object, ...], add: int) -> int | None:
        """A counter in the store, after adding ``add`` (0: read it)."""
        if self.lost:
            return None
        try:
            k = self._key(key)
            return int(self._call("membership", len(k), lambda: self.store.add(k, add)))
        except Exception as e:  # noqa: BLE001 - as above
            self._lose(e)
            return None

    def leave(self, wait_s: float) -> None:
        """This node's run is over. The host (node 0) then serves the store until every node that joined
        has left too, up to ``wait_s``: a decision it stored may not have been read by the others yet
        (a node busy capturing reads it a few seconds later)."""
        left = self._count(("left",), 1)
        if self.node != 0 or left is None:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            joined = self._count(("joined",), 0)
            left = self._count(("left",), 0)
            if joined is None or left is None or left >= joined:
                return
            time.sleep(POLL_S)

    def all_ended(self, attempt: int, wait_s: float) -> bool:
        """This node's part of ``attempt`` has ended; wait (up to ``wait_s``) until every node that joined says
        the same, so that no node starts the next attempt while another's ranks, or node 0's rendezvous store,
        still run: a new rank that reached an old store would join a rendezvous that is about to vanish.
        False when the wait ran out (or the store went away): the caller goes on alone."""
        if self._count(("ended", attempt), 1) is None:
            return False
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            joined = self._count(("joined",), 0)
            ended = self._count(("ended", attempt), 0)
            if joined is None or ended is None:
                return False
            if ended >= joined:
                return True
            time.sleep(POLL_S)
        return False

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
            log.warning(
                "hangwatch: %s; ignoring it. Set the same --coord-token (or HANGWATCH_COORD_TOKEN) on every node.", what
            )

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
                sys.stderr.write(
                    f"hangwatch: the coordination store at {topo.endpoint} belongs to a run with "
                    "another token; this node carries on alone. Set the same --coord-token (or "
                    "HANGWATCH_COORD_TOKEN) on every node.\n"
                )
        except Exception as e:  # noqa: BLE001 - torch raises many kinds: carry on alone
            self._lose(e)

    def _lose(self, e: Exception) -> None:
        log.warning("coordination store unreachable (%s); continuing without other nodes", e, exc_info=True)
        self.lost = True

    def _call(self, purpose: str, nbytes: int, fn: Callable[[], T]) -> T:
        self.stats.count(purpose, nbytes)
        return fn()

    def publish(self, key: tuple[object, ...], message: Message, purpose: str = "incident", news: bool = True) -> None:
        """Store ``message`` under ``key`` (nothing once the store is lost); ``news``: worth the other nodes'
        look (a node's liveness, or what only a follower reads once, is not)."""
        if self.lost:
            return
        try:
            k = self._key(key)
            v = self._wrap(k, message.to_dict())
            self._call(purpose, len(k) + len(v), lambda: self.store.set(k, v))
            if purpose != "tick" and news:  # news (a request, a summary); a node's liveness is not
                self._news(purpose)
        except Exception as e:  # noqa: BLE001 - torch raises many kinds; the host node went away: carry on alone
            self._lose(e)

    def _news(self, purpose: str) -> None:
        """Count one more message worth a look: the rounds of the other nodes poll this one counter."""
        k = self._key(NEWS)
        self._call(purpose, len(k), lambda: self.store.add(k, 1))

    def news(self) -> int | None:
        """How many messages worth a look were stored so far (one message): unchanged means nothing new.
        A counter of our own, not the store's key count: a decision that replaces a "report" under the same
        key, or keys that come and go, leave the key count as it was."""
        if self.lost:
            return None
        try:
            k = self._key(NEWS)
            return int(self._call("tick", len(k), lambda: self.store.add(k, 0)))
        except Exception as e:  # noqa: BLE001 - as above
            self._lose(e)
            return None

    def read(self, key: tuple[object, ...], kind: type[M], purpose: str = "incident") -> M | None:
        """The message stored under ``key``, if any."""
        if self.lost:
            return None
        try:
            k = self._key(key)
            if not self._call(purpose, len(k), lambda: self.store.check([k])):
                return None
            raw = self._call(purpose, len(k), lambda: self.store.get(k))
            self.stats.bytes[purpose] += len(raw)
            return self._parse(k, raw, kind)
        except Exception as e:  # noqa: BLE001 - as above
            self._lose(e)
            return None

    def _parse(self, k: str, raw: bytes | str, kind: type[M]) -> M | None:
        try:
            payload = self._unwrap(k, raw)
            return None if payload is None else kind.from_dict(payload)
        except (ValueError, TypeError):
            log.warning("ignoring a malformed coordination message under %s", k)
            return None

    def share_summary(self, attempt: int, summary: NodeSummary, count: bool) -> None:
        """This node's summary for ``attempt``; ``count`` (once per attempt) so gatherers poll one number."""
        if self.lost:
            return
        self.publish(("summary", attempt, self.node), summary)
        if not count or self.lost:
            return
        try:
            k = self._key(("summaries", attempt))
            self._call("incident", len(k), lambda: self.store.add(k, 1))
        except Exception as e:  # noqa: BLE001 - as above
            self._lose(e)

    def gather(self, attempt: int, wait_s: float) -> dict[int, NodeSummary]:
        """Every node's summary for ``attempt``, waiting up to ``wait_s`` for the missing ones: one
        counter polled, then one read of them all (or of those there at the deadline)."""
        if self.lost:
            return {}
        deadline = time.monotonic() + wait_s
        count_key = self._key(("summaries", attempt))
        keys = [self._key(("summary", attempt, n)) for n in range(self.topo.nnodes)]
        try:
            while True:
                n = int(self._call("incident", len(count_key), lambda: self.store.add(count_key, 0)))
                if n >= self.topo.nnodes or time.monotonic() >= deadline:
                    break
                time.sleep(POLL_S)
            # The count can pass the keys (two nodes with one rank): multi_get would wait for a missing one.
            if n >= self.topo.nnodes and self._call("incident", sum(map(len, keys)), lambda: self.store.check(keys)):
                raws = self._call("incident", sum(map(len, keys)), lambda: self.store.multi_get(keys))
                self.stats.bytes["incident"] += sum(map(len, raws))
                found = dict(zip(range(self.topo.nnodes), raws, strict=True))
            else:  # the deadline: read the ones that are there
                found = {}
                for i, k in enumerate(keys):
                    if self._call("incident", len(k), lambda k=k: self.store.check([k])):  # type: ignore[misc]
                        found[i] = self._call("incident", len(k), lambda k=k: self.store.get(k))  # type: ignore[misc]
        except Exception as e:  # noqa: BLE001 - as above
            self._lose(e)
            return {}
        got = {i: self._parse(keys[i], raw, NodeSummary) for i, raw in found.items()}
        return {i: v for i, v in got.items() if v is not None}

    def decide(self, attempt: int, proposal: Decision) -> Decision:
        """Propose a decision; the first proposal stored for this attempt wins on every node, except that
        a "report" decides nothing for good: a later kill or restart (the job crashed, a budget stop)
        replaces it, or the other nodes' ranks would wait for ever on the ones that ended."""
        if self.lost:
            return proposal
        try:
            k = self._key(("decision", attempt))
            mine = self._wrap(k, proposal.to_dict())
            won = self._call("incident", len(k) + 2 * len(mine), lambda: self.store.compare_set(k, "", mine))
            payload = self._unwrap(k, won)
            if payload is not None and payload.get("action") == OnHang.REPORT and proposal.action != OnHang.REPORT:
                stored = won.decode() if isinstance(won, bytes) else won
                won = self._call(
                    "incident",
                    len(k) + 2 * len(mine),  # swapped only if no other node got there first
                    lambda: self.store.compare_set(k, stored, mine),
                )
                payload = self._unwrap(k, won)
            self._news("incident")
            return proposal if payload is None else Decision.from_dict(payload)
        except Exception as e:  # noqa: BLE001 - as above: decide alone
            self._lose(e)
            return proposal
