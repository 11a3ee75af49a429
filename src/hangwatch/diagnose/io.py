"""I/O causes: blocked in a network call."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose.own import self_held
from hangwatch.diagnose.scene import Hit, Scene, named, named_at
from hangwatch.diagnose.state import ALIVE, thread_state
from hangwatch.diagnose.views import ProcessView, ThreadView, describe, described, innermost_user
from hangwatch.fixes import ACCEPT_FIX, DATAGRAM_FIX, NETWORK_FIX, STORAGE_FIX
from hangwatch.records.evidence import Role
from hangwatch.records.incident import Finding


def _in_network(t: ThreadView) -> bool:
    if not t.has_stack or (t.cpu_percent or 0.0) > 30.0:
        return False
    if any(sg.is_network_frame(f) for f in t.frames):
        return True
    if not t.idle_throughout:
        return False
    if (t.last.fd_target or "").startswith(sg.NETWORK_FD_PREFIXES):
        return True
    wchan = t.last.wchan or ""
    return any(w in wchan for w in sg.NETWORK_WCHANS)


def _network_thread(v: ProcessView) -> ThreadView | None:
    """The main thread if it is in a network call; else, when the main thread only waits for
    another thread (queue, event, join), a user thread of the process that is in a network call."""
    main = v.main_thread
    if main is None or not main.has_stack:
        return None
    if _in_network(main):
        return main
    if not main.idle_throughout or not any(sg.matches_any(f, sg.THREAD_SYNC) for f in main.frames):
        return None
    return next((t for t in v.user_threads if _in_network(t)), None)


def _network_hit(v: ProcessView, t: ThreadView) -> Hit:
    """A thread in a network call, named: alive where the state module says so of its thread, else blocked."""
    wchan = t.last.wchan or ""
    frame = innermost_user(t.frames)
    rchar, wchar = v.delta("rchar") or 0, v.delta("wchar") or 0
    # the state module says whether it is alive: it works (bytes move: its own, or the process's where only it could
    # have moved them), sleeps on a timer or wakes
    state = thread_state(v, t)
    moving = state.state in ALIVE
    who = "main thread" if t.tid == v.pid else f"thread '{t.name}' (the main thread waits for it)"
    ev = [f"{v.label()} {who} in a network call for {v.duration_s:.0f} s at {described(frame)}"]
    net = next((f for f in t.frames if sg.is_network_frame(f)), None)
    if net is not None:
        ev.append(f"innermost network frame: {describe(net)}")
    if t.last.syscall and t.last.fd_target:
        ev.append(f"blocked in {t.last.syscall}() on {t.last.fd_target}")
    elif wchan:
        ev.append(f"kernel wait: {wchan}")
    ev.append(f"{rchar} bytes read" + (f", {wchar} written" if wchar else "") + " in the window")
    conf = 0.55 if moving else 0.8
    if v.role == Role.DATALOADER_WORKER:
        conf -= 0.2  # the DataLoader rule names the worker; this says what it waits for
    if moving:  # the state's fact, not a guess at a direction (a download writes its file: wchar is no upload)
        summary = f"{v.label()} waits on the network at {describe(frame)}, alive ({state.state}: {state.fact})."
    elif state.state == "blocked" and _not_accepted(v, t):  # (what the kernel shows: no network is waited for)
        summary = (
            f"{v.label()} waits for an answer at {describe(frame)} on a connection that waits in the accept queue of "
            "a listening socket its own process holds: no thread of it had accepted the connection when it was read."
        )
    elif state.state == "blocked":
        summary = f"{v.label()} is blocked waiting for the network at {describe(frame)}."
    else:  # not measured blocked (seen too briefly, not read, idle): its state, as measured
        summary = f"{v.label()} waits on the network at {describe(frame)} ({state.state}: {state.fact})."
    target, blocked = t.last.fd_target or "", state.state == "blocked"  # (in that call for the whole window)
    # the fd's local end: "tcp 0.0.0.0:5 -> 0.0.0.0:0"; a unix socket's is not said
    local = target[4:].split(" -> ")[0] if target.startswith(("tcp ", "udp ")) else "its listening socket"
    accepts = t.last.syscall in ("accept", "accept4") and blocked
    datagram = target.startswith("udp ") and target.endswith(":0") and blocked  # (bound, unconnected: peer port 0)
    if accepts:  # a server's accept: it waits for a client, not for a reply
        summary = f"{v.label()} waits for a client to connect to {local} at {describe(frame)}; none came in the window."
    elif datagram:  # any process that can reach the port may send one: who should, and whether it lives, is not read
        summary = f"{v.label()} waits for a datagram on {local} (UDP) at {describe(frame)}; none came in the window."
    fix = ACCEPT_FIX if accepts else DATAGRAM_FIX if datagram else NETWORK_FIX
    finding = Finding(Cause.IO_NETWORK_WAIT, conf, summary, v.where(t, frame), tuple(ev), fix)
    return named(finding)


def _talks_within_the_job(v: ProcessView, t: ThreadView) -> bool:
    """``t``'s socket (every one it waits on) has its other end, accepted, in ``v`` alone (a server on a thread of its
    own, over loopback) or in processes of the job (a server child): no network is waited for, whatever the frames
    say; the graph follows the wait to that thread or process. (One in the accept queue of another process's listening
    socket stands for a server that never answers: the network's, said as what it is, ``_not_accepted``.)"""
    mine = [w for w in v.ev.waits if w.tid == t.tid]
    return bool(mine) and all(
        w.kind in ("socket", "socket_full")
        and (self_held(w) or (bool(w.holders) and all(h.in_job for h in w.holders)))
        and sg.NOT_ACCEPTED not in (w.note or "")
        for w in mine
    )


def _not_accepted(v: ProcessView, t: ThreadView) -> bool:
    """``t`` waits for an answer on a connection that waits in the accept queue of a listening socket its own process
    holds (a server started after the request, or a stand-in for a remote one that never answers)."""
    return any(w.tid == t.tid and self_held(w) and sg.NOT_ACCEPTED in (w.note or "") for w in v.ev.waits)


def network_wait_rule(scene: Scene) -> list[Hit]:
    """io.network_wait: blocked in a socket or HTTP call."""
    found = [(v, _network_thread(v)) for v in scene.views if v.role != Role.LAUNCHER]
    return [_network_hit(v, t) for v, t in found if t is not None and not _talks_within_the_job(v, t)]


# Kernel wait channels that name the storage layer (docs/facts.md#storage-waits).
NETWORK_FS_WCHANS = ("rpc_wait_bit_killable", "nfs", "fuse", "cifs", "smb", "lustre", "gpfs", "ceph")
DISK_WCHANS = ("io_schedule", "folio_wait", "wait_on_page", "blk_", "jbd2", "ext4", "xfs", "btrfs")


def storage_wait_rule(scene: Scene) -> list[Hit]:
    """io.storage_wait: uninterruptible disk or network-filesystem waits, or file I/O that stopped."""
    hits = []
    for v in scene.views:
        if not v.ev.samples or any(s.state != "D" for s in v.ev.samples):
            continue
        moved = v.disk_bytes
        t = next((t for t in v.threads if t.last.state == "D"), v.main_thread)
        wchan = (t.last.wchan if t else None) or ""
        netfs = any(w in wchan for w in NETWORK_FS_WCHANS)
        disk = any(w in wchan for w in DISK_WCHANS)
        frame = innermost_user(t.frames) if t else None
        conf = 0.85 if netfs or disk else 0.55
        state = thread_state(v, t) if t is not None else None
        alive = state is not None and state.state in ALIVE
        if alive:  # the storage moves (the state module says): a slow disk, not a stuck one
            conf -= 0.25
        what = "a network filesystem" if netfs else "the disk" if disk else "the kernel"
        said = (
            f"{v.label()} has been in uninterruptible sleep (D) for the whole {v.duration_s:.0f} s window, "
            f"waiting on {what}"
            + (f", at {describe(frame)}." if frame else ".")
            + (f" It is alive ({state.state}: {state.fact})." if alive and state is not None else "")
        )
        facts = (
            f"{v.label()} in state D in every sample",
            f"kernel wait channel: {wchan or 'unknown'}",
            f"{moved} bytes of storage I/O in the window",
        )
        hits.append(named_at(v, t, frame, Cause.IO_STORAGE_WAIT, conf, said, facts, STORAGE_FIX))
    return hits
