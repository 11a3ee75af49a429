"""The wait-for graph's records (diagnose/graph.py builds them): a node (a process, a thread, a person, a host,
nobody), an edge (a wait, with the measured fact that says it), a chain followed from a waiter to its end, and what
each ending makes the wait (``ENDINGS``, which extends the state module's ``VERDICTS`` with the ends only a chain
has: a cycle, ended, nobody, a person)."""

from __future__ import annotations

from typing import Any

from hangwatch.diagnose.state import VERDICTS
from hangwatch.records.evidence import ANY_HOLDER_KINDS
from hangwatch.records.incident import Proof, ProofKind, Verdict
from hangwatch.records.values import frozen

PERSON = "person"


NOBODY = "nobody"
ALL_ASLEEP = "every thread of the process, each asleep"  # a nobody node's label where every thread waits (all_asleep)


# Waits the holder's exit ends: the waiter gets the child's status, end of file, or EPIPE (a DataLoader's main
# process sees its worker's exit within seconds and raises, or the worker left at the epoch's end). A holder gone
# from one of these is the wait's end, not a hang; a lock or a semaphore is not released by its holder's death.
ENDED_BY_EXIT = frozenset(
    {"child", "pidfd", "pipe", "pipe_full", "socket", "socket_full", "send", "recv", "collective", "dataloader batch"}
    | {"signal"}
)


# A wait on a pipe or socket whose other end only the waiter holds, in words (path, place).
SELF_HELD = {
    "pipe": "reads {} at {}, and only it holds its write end",
    "pipe_full": "writes to {}, which is full, at {}, and only it holds its read end",
    "socket": "waits for an answer on {} at {}, and only it holds its other end",
    "backlog": "waits for an answer on {} at {}, and the connection waits in the accept queue of a listening socket "
    "only it holds, not accepted",
    "socket_full": "writes to {}, which is full, at {}, and only it holds its other end",
    "flock": "waits for a flock() lock on {} at {}, and only it holds it, through another open of the file",
    "filelock": "waits for a file lock on {} at {}, and only it holds it, through another open of the file",
    "ofd": "waits for an open file description lock (fcntl F_OFD_SETLKW) on {} at {}, and only it holds it, through "
    "another open of the file",
    "poll": "polls {} at {} (among its files), and only it holds its other end",
    "loop": "runs an asyncio event loop at {1} with no callback ready, which polls {0} (among its files), and only it "
    "holds its other end",
    "eventfd": "reads {} at {}, and only it holds it (only a write to it ends the read)",
    "timerfd": "reads {} at {}, and only it holds it (only arming its timer again would end the read sooner)",
    "epoll": "polls {} at {}, and only it holds it (only a file added to it could end the wait)",
    "poll eventfd": "polls {} at {} (among its files), and only it holds it",
}
# An eventfd's read ends only when a holder writes it, a timerfd's sooner than its timer when a holder arms it again,
# an empty epoll's when a holder adds a file to it: any holder could (no end of file: a holder's exit ends nothing).
# What a holder could do, in words.
ANY_HOLDER_COULD = {"eventfd": "write it", "timerfd": "arm it again", "epoll": "add a file to it"}
WRITTEN_BY_ANY = ANY_HOLDER_KINDS
# File locks that belong to an open file, not to a process: a second open of the file in the same process waits for
# the first (POSIX locks are the process's own: it never waits for itself; an OFD lock's only where it is the one
# lock on the file, capture/waits.py)
OPEN_FILE_LOCKS = frozenset({"flock", "filelock", "ofd"})


MAX_HOPS = 16  # chains stay short to read; a longer one is cut and says so


MAX_HOLDERS = 8  # of one pipe or socket, followed as edges


# How a chain's end decides: (verdict, whether the end itself is proof of a hang): a holder's state as
# ``state.VERDICTS`` says, and the ends only a chain has.
ENDINGS: dict[str, tuple[Verdict | None, bool]] = {
    **VERDICTS,
    "cycle": (Verdict.HUNG, True),
    "ended": (Verdict.SLOW, False),  # the holder has exited, and its exit ends the wait: measured, not a clock's guess
    "nobody": (Verdict.HUNG, True),
    "person": (Verdict.HUNG, True),
    "moves": (Verdict.SLOW, False),  # the rest of the job, any process of which could end the wait, moves
}
ALIVE_ENDINGS = frozenset(e for e, (verdict, _) in ENDINGS.items() if verdict == Verdict.SLOW)


@frozen
class Node:
    """A process (or a person, or nobody) in the graph, with its state and the fact behind it."""

    # `pid:N` for a process; `person` (at the terminal) or `nobody:N` (nothing living can end what pid N waits on:
    # release its lock, set its event, send its signal)
    id: str
    label: str  # who, in words ("main (pid 10)")
    # what it does, measured: gone, stopped, blocked, spinning, looping, long_sleep, idle, working, asleep, wakes,
    # brief, unknown (person and nobody at a chain's end)
    state: str
    fact: str  # the measured fact behind its state
    in_job: bool = True  # a process of the job (else someone else's: never touched)
    proves_work: bool = False  # the fact proves work (locals advance, bytes move), not only that it runs
    proves_hang: bool = False  # blocked, and its own wait is proven (every thread parked on its own primitives)
    single_minded: bool = False  # blocked in its main thread over the window, and no other thread could run
    # blocked so, and each other thread that could run blocked too, on these nodes (a loop through all of them is
    # closed); None where one of them waits on nothing followed
    needs: frozenset[str] | None = None
    measured: bool = True  # seen long enough to say what it does (False: one sample, or too brief a window)

    def to_dict(self) -> dict[str, Any]:
        """The node as JSON (its keys, read by docs/gen.py, are the incident's reference)."""
        return {
            "id": self.id,
            "label": self.label,
            "state": self.state,
            "fact": self.fact,
            "in_job": self.in_job,
            "proves_work": self.proves_work,
            "proves_hang": self.proves_hang,
        }


@frozen
class Edge:
    """``waiter`` waits on ``resource``, which ``holder`` could release."""

    waiter: str  # the node id that waits
    holder: str  # the node id that could end the wait
    resource: str  # "child", "dataloader batch", "file lock", "semaphore", "terminal", "lock", "event", ...
    words: str  # the hop in words: "main (pid 10) waits for its child pid 11 at prep.py:12"
    timeout: bool | None = None  # whether the waiter's own wait can time out (None: it does not say)
    tid: int | None = None  # the thread of the waiter that waits, where the wait is one thread's (None: its main wait)

    def to_dict(self) -> dict[str, Any]:
        """The edge as JSON (its keys, read by docs/gen.py, are the incident's reference)."""
        return {
            "waiter": self.waiter,
            "holder": self.holder,
            "resource": self.resource,
            "words": self.words,
            "timeout": self.timeout,
            "tid": self.tid,
        }


@frozen
class Chain:
    """One waiter's chain to its end: the hops, how it ends, and what that makes the wait."""

    hops: tuple[Edge, ...]
    end: Node
    ending: str  # how it ends: cycle, ended, nobody, person, or the state of its end node (ENDINGS)
    verdict: Verdict | None
    proof: Proof | None

    @property
    def waiter(self) -> str:
        """The first waiter's node id."""
        return self.hops[0].waiter

    @property
    def proves_hang(self) -> bool:
        """The graph proves the wait hung (its proof is of a hang, not of work)."""
        return self.proof is not None and self.proof.kind == ProofKind.HANG

    @property
    def ending_text(self) -> str:
        """What the chain's end makes the wait, in words."""
        return ending_text(self.ending, self.hops, proven=self.proof is not None, end=self.end)

    def lines(self) -> tuple[str, ...]:
        """The chain in words, waiter first, one hop a line, then what it makes the wait."""
        out = [self.hops[0].words] + [f"-> {h.words}" for h in self.hops[1:]]
        if self.end.state == NOBODY:
            out.append(f"-> {nobody_text(self.hops[-1].resource, self.end)}: {self.end.fact}")
        else:
            out.append(f"-> {self.end.label} is {STATE_WORDS.get(self.end.state, self.end.state)}: {self.end.fact}")
        proven = self.proof is not None and self.ending in ("blocked", "looping")
        out.append(f"=> {self.ending_text}" + (" (hung: proven, above)" if proven else ""))
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """The chain as JSON."""
        return {
            "waiter": self.waiter,
            "hops": [h.to_dict() for h in self.hops],
            "end": self.end.id,
            "ending": self.ending,
            "verdict": self.verdict.value if self.verdict else None,
            "proof": self.proof.to_dict() if self.proof else None,
            "words": list(self.lines()),
        }


STATE_WORDS = {
    "ended": "gone, and its exit ends the wait",
    "long_sleep": "asleep on a timer that ends after the job's bounds",
    "looping": "in a loop with no way out",
    "wakes": "waking again and again",
    "brief": "seen too briefly to say what it does",
    "started": "started during the look, new to any wait",
    "traced": "paused by its tracer, which works or waits for its user",
    "spin_waits": "spinning on what may still change (the clock, another thread of it that is alive)",
    "moves": "moving",
}


ENDING_TEXT = {
    "cycle": "a cycle: each waits for the next, so none ever moves (hung)",
    "gone": "the holder is gone, so what it held is never released (hung)",
    "ended": "the holder has exited, and its exit ends this wait (end of file, the child's status, torch's check)",
    "nobody": "no living thread can release it (hung)",  # a lock's; other waits: NOBODY_ENDS
    "person": "it waits for someone to type, and nobody is there (hung)",
    "stopped": "the holder is stopped and runs again only when someone continues it (hung)",
    "blocked": "the holder is itself blocked, so the wait does not end by itself",
    "spinning": "the holder runs but gets nowhere, so the wait does not end by itself",
    "looping": "the holder runs a loop with no way out, so the wait never ends",
    "long_sleep": "the holder sleeps on a timer that ends after the job's bounds: the wait does not end in time (hung)",
    "idle": "the holder waits for work of its own: nothing the waiter needs is being done",
    "working": "the holder works: the wait ends when its work does (waiting, bounded by --max-slow)",
    "asleep": "the holder sleeps and a timer will wake it: alive",
    "wakes": "the holder wakes again and again: alive",
    "traced": "the holder is paused by a tracer that works or waits for its user (a debugger): not hung, bounded by "
    "--max-slow",
    "spin_waits": "the holder spins on what may still change (the clock, another thread of it that is alive): not "
    "hung, bounded by --max-slow",
    "moves": "something of the job that could end it moves: alive",
    "brief": "the holder was seen too briefly to say what it does: no verdict from the chain",
    "unknown": "what the holder does could not be read: no verdict from the chain",
}


# An end that proves nothing by itself, said as what was seen (with a proof, ENDING_TEXT says what it proves): an
# outside `tail -f` feeding the job's stdin is blocked in poll() on its inotify file, and its wait ends when the file
# grows.
UNPROVEN_TEXT = {
    "blocked": "the holder is itself blocked, on what hangwatch did not follow: nothing seen would end the wait, and "
    "nothing proves it never ends",
    "spinning": "the holder runs, and was not seen to get anywhere: nothing proves the wait never ends",
    "looping": "the holder wakes in a loop, and nothing proves the wait never ends",
    "cycle": "a cycle, but a wait on it may end by itself (a timeout, or one of several it waits for): nothing "
    "proves none ever moves",
}


# Who would end a wait that nobody can end, and how, by the last hop's resource: a lock (any kind) is released by
# its holder, so "no living thread holds it"; nobody holds an event, a queue's tasks or a signal.
NOBODY_ENDS = {
    "event": ("no living thread", "set it"),
    "condition": ("no living thread", "notify it"),
    "barrier": ("no living thread", "arrive at it"),
    "queue": ("no living thread", "put to it or take from it"),
    "queue's unfinished tasks": ("no living thread", "mark them done"),
    "queue's room": ("no living thread", "make room in it"),
    "future": ("no living thread", "complete it"),
    "pool result": ("no living thread", "hand it over"),
    "dataloader batch": ("no living worker", "bring it"),
    "signal": ("no signal", "let it go on"),  # no handler: a signal could only end the process
    "join": ("no living thread", "end it"),
}


def nobody_text(resource: str | None, end: Node | None = None) -> str:
    """Why nobody ends a wait on ``resource``, as a hop says it: ``no living thread holds it`` (a lock), ``no living
    thread will set it`` (an event); where every thread of the process is asleep (``end``'s label ``ALL_ASLEEP``: the
    holder may be alive, asleep itself), that none of them can run to release or set it."""
    who, verb = NOBODY_ENDS.get(resource or "", ("", "release it"))
    if end is not None and end.label == ALL_ASLEEP:
        return f"no thread of the process can run to {verb}"
    return f"{who} will {verb}" if who else "no living thread holds it"


def ending_text(ending: str, hops: list[Edge] | tuple[Edge, ...], proven: bool = True, end: Node | None = None) -> str:
    """What a chain's end makes the wait, in words (``proven``: the chain has a proof); a cycle of one process is that
    process waiting on itself, and so is a process every thread of which is asleep (``end``)."""
    if ending == NOBODY and end is not None and end.label == ALL_ASLEEP:
        return "every thread of the process is blocked in a wait of its own, so none can run to end this one (hung)"
    if ending == "cycle" and len(hops) == 1 and hops[0].waiter == hops[0].holder and proven:
        return "only the waiter's own process could end this wait, and none of its threads was seen able to (hung)"
    if ending == "blocked" and hops and hops[-1].holder.startswith("job:"):  # any process may still open it, connect
        return "nothing in the job was seen able to end it, and a process outside it still could: nothing proves it"
    if ending == NOBODY and hops and hops[-1].resource in NOBODY_ENDS:
        who, verb = NOBODY_ENDS[hops[-1].resource]
        return f"{who} can {verb} (hung)"
    return ENDING_TEXT[ending] if proven or ending not in UNPROVEN_TEXT else UNPROVEN_TEXT[ending]


def node_pid(node: str) -> int | None:
    """The process of a node id: N of ``pid:N`` or of ``thread:N:TID``; None for a person or nobody."""
    return int(node.split(":")[1]) if node.startswith(("pid:", "thread:")) else None


def pid_id(pid: int) -> str:
    """A process's node id."""
    return f"pid:{pid}"


def to_nobody(
    pid: int,
    resource: str,
    words: str,
    fact: str,
    timeout: bool | None = False,
    tid: int | None = None,
    asleep: bool = False,
) -> tuple[Edge, Node]:
    """A wait of process ``pid`` that nobody can end: its edge to the process's own nobody node (one per process:
    its own fact, not the first process's), whose ``fact`` says why; ``asleep``: because every thread of the process
    waits (its label ``ALL_ASLEEP``), not because nothing living holds what it waits on."""
    nobody = f"{NOBODY}:{pid}"
    node = Node(nobody, ALL_ASLEEP if asleep else "nobody", NOBODY, fact)
    return Edge(pid_id(pid), nobody, resource, words, timeout=timeout, tid=tid), node


def to_anyone(
    pid: int, resource: str, words: str, who: str, moves: str | None, nothing: str, timeout: bool | None, tid: int
) -> tuple[Edge, Node]:
    """A wait of process ``pid`` that any other process of the job could end (``who``: open a FIFO's other end,
    connect, call a manager): its edge to the rest of the job, which moves (``moves``: what does, in words) or is
    blocked (``nothing``: that none of it moves that could)."""
    anyone = f"job:{pid}"
    node = Node(anyone, f"the rest of the job ({who})", "moves" if moves else "blocked", moves or nothing)
    return Edge(pid_id(pid), anyone, resource, words, timeout=timeout, tid=tid), node


@frozen
class WaitGraph:
    """Every node and edge of one look, and each waiter's chain."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    chains: tuple[Chain, ...]

    def chain_of(self, pid: int | None) -> Chain | None:
        """The chain followed from process ``pid``'s wait, if it waits."""
        return next((c for c in self.chains if c.waiter == f"pid:{pid}"), None) if pid is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The graph as JSON (``incident.json``'s ``graph``)."""
        return {
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [e.to_dict() for e in self.edges],
            "chains": [c.to_dict() for c in self.chains],
        }
