"""Ranks as nodes of the wait-for graph: what a rank blocked in one of torch's calls waits on among this host's
ranks, from the call and its arguments that capture/c10d.py read (a send's peer and tag, a collective's group, a
group's making: its name and members)."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.diagnose.chains import Edge, pid_id
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.views import ProcessView
from hangwatch.records.evidence import Role

P2P_WORDS = {"send": "sends to rank {} at {}", "recv": "receives from rank {} at {}"}
P2P_MATCH = {"send": "recv", "recv": "send"}
TAGS_DIFFER = "which it does not match"  # a send's and its peer's receive's tags, both read, differ
SETUP = "group setup"  # a rank making a group waits for its members to make the same one
NAMES_DIFFER = "under another name"  # a member making the group under a name of its own: they never meet
RANK_RESOURCES = frozenset({*P2P_WORDS, "collective", SETUP})


def _local_ranks(scene: Scene) -> dict[int, ProcessView] | None:
    """This host's ranks by their global rank, or None when the numbers cannot be trusted as the ones a call's
    ``dst`` names: two processes with one number (a RANK inherited by a child), or ranks numbered here in start
    order (mp.spawn, a relaunched copy: no RANK in their environment), whose numbers are global only when their
    environment says the whole world is on this host (a node's local numbers would name remote ranks here)."""
    views = [w for w in scene.views if w.info.rank is not None and w.role in (Role.RANK, Role.MAIN)]
    by_rank = {w.info.rank: w for w in views if w.info.rank is not None}
    if len(by_rank) != len(views) or len(views) < 2:
        return None
    if all("RANK" in w.info.env for w in views):
        return by_rank  # torchrun's, and every launcher's that sets them: global
    if all(w.info.env.get("WORLD_SIZE") == str(len(views)) for w in views) or all(w.info.rank_from_args for w in views):
        return by_rank  # the whole world is here (its environment, or its targets' own arguments, say so)
    return None


def _sealed(v: ProcessView) -> bool:
    """``v`` read and wrote not one byte over the window (/proc/PID/io, known at both ends). A pair of calls that
    matches one posted earlier without blocking (an ``irecv`` before a ``send``, an ``isend`` before a ``recv``)
    moves its bytes, and the sending side's writes are counted (a receive's are not: ``recv`` is no ``read``);
    in a cycle each rank would be a sending side, so a cycle of ranks none of which wrote is no transfer in
    flight. (gloo's own loop thread wakes about a hundred times a second even then: wake-ups say nothing here.)"""
    return v.delta("wchar") == 0 and v.delta("rchar") == 0


def rank_waits(scene: Scene, v: ProcessView, at: str) -> list[Edge]:
    """A rank blocked for the whole window in one of torch's calls (the call and its arguments read by
    capture/c10d.py, from the stack the window saw) waits on other ranks of this host:
    - in ``dist.send`` (``dist.recv``), for its peer to post the matching receive (send): an edge to that rank,
      unless the peer is in that very call towards it (then the pair matches, and what they wait on is the
      transport, not each other);
    - in a collective of the default group, for every rank measured not in it (read in another call, or with
      no c10d call in its stack): an edge to each (a rank in a group of the user's waits on that group's
      members, which its arguments do not say: no edge).
    Only when nothing of the waiter moves (``_sealed``): a send that an earlier ``irecv`` matches moves bytes.
    The process group's timeout ends such a wait with an error, never with the data: it is no way out
    (``timeout`` stays unsaid); a peer that exits ends it too (``ENDED_BY_EXIT``)."""
    cw, t = v.ev.c10d, v.main_thread
    if cw is None or t is None or v.info.rank is None or not _sealed(v):
        return []
    ranks = _local_ranks(scene)
    if ranks is None or ranks.get(v.info.rank) is not v:
        return []
    others = [w for r, w in sorted(ranks.items()) if w is not v]
    if cw.op in P2P_WORDS:
        other = ranks.get(cw.peer) if cw.peer is not None and cw.peer != v.info.rank else None
        if other is None:
            return []
        theirs = other.ev.c10d
        paired = theirs is not None and theirs.op == P2P_MATCH[cw.op] and theirs.peer in (v.info.rank, None)
        if paired and theirs is not None and (None in (cw.tag, theirs.tag) or cw.tag == theirs.tag):
            return []  # the pair matches (a tag not read may be the same)
        tag = f" with tag {cw.tag}" if cw.tag is not None else ""
        words = f"{v.label()} {P2P_WORDS[cw.op].format(cw.peer, at)}{tag}"
        if paired and theirs is not None:  # (both tags read, and they differ: else the pair matched above)
            words += f"; rank {cw.peer} is in its {theirs.op} with tag {theirs.tag}, {TAGS_DIFFER}"
        return [Edge(pid_id(v.pid), pid_id(other.pid), cw.op, words)]
    if cw.op == "new_group":
        return _setup_waits(v, ranks, at)
    if cw.world is not True:
        return []
    out = []
    for w in others:
        theirs, wt = w.ev.c10d, w.main_thread
        if theirs is not None and theirs.op == cw.op and theirs.world is True:
            continue  # in it too (the same call or the next one of the same kind: no sequence number says which)
        if theirs is None and (wt is None or not wt.frames or any(f.file.endswith(sg.C10D_PY) for f in wt.frames)):
            continue  # in a call of torch's whose arguments were not read, or not seen: not measured out of it
        words = f"{v.label()} waits in {cw.op} at {at} for rank {w.info.rank}, which is not in it"
        out.append(Edge(pid_id(v.pid), pid_id(w.pid), "collective", words))
    return out


def _setup_waits(v: ProcessView, ranks: dict[int, ProcessView], at: str) -> list[Edge]:
    """A rank making a group (``new_group``) waits for each other member of it on this host to make the same group:
    its members meet in the store under the group's name. A member making a group under another name (both names
    read: gloo's hashed names that count groups a rank skipped) never meets it; a member in no call of torch's is
    measured out of it. A member making it under the same name, or not read, is no edge (they are meeting)."""
    cw = v.ev.c10d
    if cw is None or not cw.members or cw.group is None:
        return []
    out = []
    for r in cw.members:
        w = ranks.get(r)
        if w is None or w is v:
            continue
        theirs, wt = w.ev.c10d, w.main_thread
        if theirs is not None and theirs.op == "new_group" and theirs.group is not None and theirs.group != cw.group:
            how = f"which makes a group of ranks {list(theirs.members or ())} {NAMES_DIFFER}"
        elif (
            theirs is None and wt is not None and wt.frames and not any(f.file.endswith(sg.C10D_PY) for f in wt.frames)
        ):
            how = "which is not making it"
        else:
            continue
        words = f"{v.label()} makes a group of ranks {list(cw.members)} at {at} and waits for rank {r}, {how}"
        out.append(Edge(pid_id(v.pid), pid_id(w.pid), SETUP, words))
    return out
