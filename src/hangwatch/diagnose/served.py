"""A ``multiprocessing`` Manager's server process as the holder of a client's wait (the wait-for graph's edge out of
it, which graph.py follows; the client's finding, which waits.py's socket rule takes from here).

A client's call on a proxy (``lock.acquire()``, ``q.get()``, ``ev.wait()``) sends a request on its own connection
and reads the answer; the server runs each connection in a thread of its own (``Server.serve_client``) that reads
the next request, runs it on the shared object and answers. So a thread of the server that is not reading its
connection runs a request. Where every such thread waits with no timeout for the whole window (on a lock whose
holder died, a queue nobody fills), each client waiting for an answer waits on one of them (which one is not read;
each other thread of the server waits for its client to speak), and a running request ends only by another
request: any process of the job may send one (a proxy connects when first used), so what it waits on is the rest
of the job, alive while anything else of it moves, else blocked (no proof: hung by --min-stall only). Before this,
the chain ended at the server, "alive" by its main thread's one-second poll of its stop event, and such a job was
only ever slow. A request that works or sleeps on a timer (a registered method) is the server's own state."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose import proof
from hangwatch.diagnose.chains import Edge, Node, WaitGraph, to_anyone
from hangwatch.diagnose.scene import Hit, Scene, named_at
from hangwatch.diagnose.state import moving
from hangwatch.diagnose.views import ProcessView, ThreadView, describe, innermost_user
from hangwatch.records.evidence import LockWait

MANAGERS = "/multiprocessing/managers.py"
REQUEST = "manager request"  # the resource of the server's edge
FIX = (
    "A Manager's shared lock, queue or event is released, filled or set only by a request from a process that is "
    "alive: one that died holding the lock (or before it put or set) leaves every other waiting for ever.",
    "Release the lock in a `finally` (or `with lock:`), give the wait a timeout (`lock.acquire(timeout=...)`, "
    "`q.get(timeout=...)`) and check that the process that was to release it is still alive (its `exitcode`).",
)
CONNECTION = "/multiprocessing/connection.py"


def _serves(t: ThreadView) -> bool:
    """``t`` is a Manager server's thread of one connection."""
    return any(f.function.endswith("serve_client") and sg.at(f, MANAGERS) for f in t.frames)


def running_requests(v: ProcessView) -> list[ThreadView]:
    """The threads of a Manager's server ``v`` that run a request, each blocked in it for the whole window with no
    timeout; none where ``v`` is no such server or runs none, or where any of them runs (CPU: its own state) or
    waits with a timeout (a method that sleeps: its own timer ends it). Which of them serves which client is not
    read: where every one waits so, each client waiting for an answer waits on one that only a request could end."""
    if not _bare_local_server(v):
        return []
    busy = [t for t in v.threads if _serves(t) and not sg.at(t.frames[0], CONNECTION)]
    if any(
        not t.blocked
        or not t.idle_throughout
        or not t.waits_forever
        or t.last.syscall != "futex"
        or t.last.shared_futex
        for t in busy
    ):
        return []  # (a method in a read of a pipe or the network: what it reads decides, not another request)
    return busy


def _bare_local_server(v: ProcessView) -> bool:
    """``v`` is a Manager's server and nothing else: every thread of it runs the server's own code (its stop-event
    poll, its accepter, its connections' threads: no work of its own that could end a request), and it listens
    on a unix socket (a server on TCP may have clients on other hosts, which no look of the job sees)."""
    if not v.threads or any(not t.has_stack or not any(sg.at(f, MANAGERS) for f in t.frames) for t in v.threads):
        return False
    return any(
        f.function.endswith("accepter") and (t.last.fd_target or "").startswith("unix ")
        for t in v.threads
        for f in t.frames
    )


def request_waits(scene: Scene, v: ProcessView) -> list[tuple[Edge, Node]]:
    """What a Manager's server ``v`` waits on: its one running request's wait, on the rest of the job (any process of
    which could send the request that ends it); none where it is no server running one request."""
    busy = running_requests(v)
    if not busy:
        return []
    t = busy[0]
    kind = proof.sync_wait(t)
    words = (
        f"{v.label()}, a multiprocessing Manager's server, runs "
        + (f"{len(busy)} clients' requests, each waiting so; one in" if len(busy) > 1 else "a client's request in")
        + f" its thread {t.tid} at "
        f"{describe(t.frames[0])}, where it waits on {f'a {kind}' if kind else 'an object'} the manager shares "
        f"({t.wait_text}); only another request to the manager could end it"
    )
    could, nothing = (
        "any process of it could call the manager",
        "nothing else in the job moves that could call the manager",
    )
    return [to_anyone(v.pid, REQUEST, words, could, moving(scene, besides=v.pid), nothing, t.last.timeout, t.tid)]


def still_but_server(graph: WaitGraph | None) -> bool:
    """Whether a chain ends at a Manager's running request, on a rest of the job none of which moves: the server's
    own wake-ups (its main thread polls its stop event each second) are then all that moves, and they end nothing."""
    return graph is not None and any(
        c.hops and c.hops[-1].resource == REQUEST and c.hops[-1].timeout is not True and c.ending == "blocked"
        for c in graph.chains
    )


def request_named(scene: Scene, v: ProcessView, t: ThreadView, w: LockWait) -> Hit | None:
    """process.waits_on, named at the client: ``t`` of ``v`` waits for an answer on socket ``w`` whose other end a
    Manager's server holds, that runs requests only another request could end (``request_waits``). No proof: a
    process may still send one; the clock decides. None where the holder is no such server."""
    for h in w.holders:
        server = scene.view(h.pid) if h.in_job else None
        ends = request_waits(scene, server) if server is not None else []
        if ends:
            edge, rest = ends[0]
            frame = innermost_user(t.frames)
            said = f"{v.label()} waits for an answer on {w.path} at {describe(frame)}"
            facts = (said, edge.words, f"{rest.label}: {rest.fact}")
            # 0.85: what the waiter's join or wait on the client waits for, named first
            return named_at(
                v, t, frame, Cause.PROCESS_WAITS_ON, 0.85, f"{said}; {edge.words}: {rest.fact}.", facts, FIX
            )
    return None
