"""A lock's, a pipe's or a file's holder in words: who it is, what it does, how long it has held, and the fixes
that fit (diagnose/waits.py, diagnose/graph.py)."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.diagnose.chains import ANY_HOLDER_COULD, WRITTEN_BY_ANY, Node, pid_id
from hangwatch.diagnose.state import HOLDER_ORDER, holder_state, long_timer
from hangwatch.diagnose.views import (
    ProcessView,
    ThreadView,
    described,
    duration_text,
    size_text,
)
from hangwatch.records.evidence import Frame, LockHolder, LockWait

KIND_TEXT = {
    "flock": "a flock() lock",
    "posix": "a POSIX (fcntl) lock",
    "ofd": "an OFD lock",
    "filelock": "a file lock (the filelock package, polling)",
    "soft": "a soft file lock (filelock's SoftFileLock: the file's existence is the lock)",
}


def age_text(seconds: float | None) -> str:
    """How long a holder has been running, in words ("age unknown" where it is not known)."""
    if seconds is None:
        return "age unknown"
    if seconds >= 3600:
        return f"running for {seconds / 3600:.1f} h"
    return f"running for {seconds / 60:.0f} min" if seconds >= 120 else f"running for {seconds:.0f} s"


def wait_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The innermost frame of the user's code (not the standard library's, an installed package's, nor hangwatch's own
    hook's), else the innermost."""
    return next((f for f in frames if sg.is_user(f)), frames[0] if frames else None)


# What ends each wait on a multiprocessing primitive that nobody holds, done by a process that shares it
NOTIFY = {
    "event": "set",
    "barrier": "reach",
    "condition": "notify",
    "queue's room": "make",
    "queue's unfinished tasks": "finish",
}
MP_PUTS = frozenset({"Queue.put", "JoinableQueue.put"})  # a bounded queue's put: SimpleQueue's takes a lock only


def notified(t: ThreadView) -> str | None:
    """What a wait on a multiprocessing primitive nobody holds is for, by the frames that called it: a bounded
    Queue's put waits for room (its semaphore of free slots: a get in a process that shares it makes one); a
    Condition's wait (innermost of its ``multiprocessing/synchronize.py`` frames, not the acquire of the condition's
    own lock, which a holder may take and die with) for an Event's set, a Barrier's last party
    (``threading.Barrier``'s code over multiprocessing's Condition), a JoinableQueue's join for a task_done() of each
    item put, else the condition's own notify; None where the thread waits for a lock or a semaphore someone took."""
    top = (
        t.frames[0] if t.frames else None
    )  # the put itself, at its wait for a free slot (not for its condition's lock)
    if top is not None and sg.at(top, "multiprocessing/queues.py") and top.function in MP_PUTS:
        return "queue's room" if "_sem.acquire" in (top.code or "") else None
    sync = [f for f in t.frames if sg.at(f, "multiprocessing/synchronize.py")]
    if not sync or sync[0].function != "Condition.wait":
        return None
    if any(f.function == "Event.wait" for f in t.frames):
        return "event"
    if any(f.file.endswith("/threading.py") and f.function.startswith("Barrier.") for f in t.frames):
        return "barrier"
    if any(sg.at(f, "multiprocessing/queues.py") and f.function == "JoinableQueue.join" for f in t.frames):
        return "queue's unfinished tasks"
    return "condition"


def holder_text(h: LockHolder) -> str:
    """``pid 4242 (`python prep.py`, user alice, running for 3 min, outside the job)``."""
    where = "in the job" if h.in_job else "outside the job"
    user = f", user {h.user}" if h.user else ""
    return f"pid {h.pid} (`{one_line(h.cmdline)[:100]}`{user}, {age_text(h.age_s)}, {where})"


def one_line(cmdline: str) -> str:
    """A command line on one line (`python -c` code spans several)."""
    return "; ".join(part.strip() for part in cmdline.splitlines() if part.strip())


def deciding_holder(holders: tuple[LockHolder, ...]) -> LockHolder:
    """Of the holders of a pipe's or a socket's other end, the one that ends the wait soonest (HOLDER_ORDER)."""
    return min(holders, key=lambda h: HOLDER_ORDER.index(holder_state(h)))


def holder_doing(h: LockHolder, state: str, bound: float | None = None) -> str:
    """What holder ``h`` does, in its state's words, at its frame; where it waits for its children, what the one that
    decides does; with the job's ``bound``, a timer that ends past it said as such."""
    if h.waits_for and holder_state(h, children=False) == "blocked":
        kid = deciding_holder(h.waits_for)  # (its command line, where it was read)
        named = f"pid {kid.pid}" + (f" (`{one_line(kid.cmdline)[:60]}`)" if kid.cmdline else "")
        return f"waits for its child {named}, which {holder_doing(kid, holder_state(kid), bound)}"
    timer = long_timer(h, bound) if bound is not None else None
    if timer is not None:
        return f"is {timer}"
    frame = wait_frame(h.frames)
    at = f" at {described(frame)}" if frame else ""
    if state == "working":
        parts = [
            f"{h.cpu_percent:.0f}% CPU" if h.cpu_percent is not None else None,
            f"{size_text(h.moved_bytes)} moved" if h.moved_bytes else None,
        ]
        return "works" + at + " (" + ", ".join(p for p in parts if p) + ")"
    if state == "asleep":
        timer = f" on a timer that ends in {duration_text(h.wakes_in)}" if h.wakes_in is not None else ""
        return "is asleep" + at + timer
    if state == "stopped":
        return "is stopped (SIGSTOP, Ctrl-Z or a debugger)" + at
    if state == "gone":
        return "is gone"
    if state == "unknown":
        return "is a process of another user, which this watch does not read"
    return f"is blocked{at} at {h.cpu_percent or 0:.0f}% CPU"


def lock_fix(w: LockWait, h: LockHolder | None) -> tuple[str, ...]:
    """The fixes for a wait on lock ``w`` held by ``h``, most likely first."""
    path = w.path or "the lock file"
    out = []
    if h is not None and not h.in_job:
        out.append(
            f"pid {h.pid} outside the job holds {path}: end it if it is a leftover (`kill {h.pid}`), or wait "
            "for it; hangwatch only ever ends the job's own processes."
        )
    elif h is not None and "copy of the open file" in h.how:
        out.append(
            f"The job's own pid {h.pid} holds {path} through a copy of the open file it was forked with: a flock "
            "stays until the last copy is closed. Unlock it explicitly (fcntl.flock(f, fcntl.LOCK_UN)) before "
            "starting a process, or start helpers outside the locked section (or with spawn)."
        )
    elif h is not None:
        out.append(
            f"The job's own pid {h.pid} holds {path}: release it before waiting for the work that needs it, "
            "or take it in one process only."
        )
    if w.kind in ("filelock", "flock", "posix", "ofd"):
        out.append(
            "If it is a cache lock (Hugging Face datasets or hub), give this job a cache of its own: "
            "HF_DATASETS_CACHE=/local/dir (or HF_HOME), or point the lock path elsewhere."
        )
        out.append(
            "Give the wait a timeout: FileLock(path, timeout=600), or fcntl with LOCK_NB and a retry limit, "
            "so a lock that is never released raises."
        )
    else:
        out.append("Give the wait a timeout: lock.acquire(timeout=600), so a lock that is never released raises.")
    return tuple(out)


def holder_node(h: LockHolder, bound_s: float) -> Node:
    """A holder the views lack (outside the job, or gone) as a node of the wait-for graph: its state, and the fact
    behind it (a parked holder's why, a timer that ends past ``bound_s``)."""
    state = holder_state(h, children=False)  # its children, when it waits for them, are nodes of their own
    fact = f"state {h.state or 'gone'}, {h.cpu_percent or 0:.0f}% CPU, {h.moved_bytes or 0} bytes moved"
    if state == "blocked" and h.call and not h.parked:
        fact += f", waiting in {h.call}()"
    if state == "blocked" and h.parked:  # why a parked holder never moves
        fact += (
            f"; every thread of pid {h.pid} waits with no timeout on a lock or event of its own (or in pause(), for a "
            "signal), and none woke over the look, so nothing in it can release what it holds"
        )
    timer = long_timer(h, bound_s)
    if timer is not None:
        state = "long_sleep"
        fact += f"; {timer}"
    return Node(
        pid_id(h.pid),
        f"pid {h.pid}" if h.in_job else holder_text(h),
        state,
        fact,
        in_job=h.in_job,
        proves_work=state == "working",
        proves_hang=(state == "blocked" and bool(h.parked)) or state == "long_sleep",
    )


def holder_words(
    v: ProcessView, wt: ThreadView | None, w: LockWait, h: LockHolder, who: str, place: str, what: str
) -> str | None:
    """A hop from waiter ``who`` to holder ``h`` of ``w``, in words; None for a multiprocessing event or condition
    several sharers could set (a wait for any of them: no hop through one)."""
    if w.kind == "pipe":
        end = "master" if (w.path or "").startswith(sg.PTY_PATH) else "write"
        return f"{who} reads {w.path} at {place}; pid {h.pid} holds its {end} end"
    if w.kind == "socket":
        return f"{who} waits for an answer on {w.path} at {place}; pid {h.pid} " + (
            "holds its other end" if sg.NOT_ACCEPTED not in h.how else "has not accepted the connection"
        )
    if w.kind == "pidfd":  # (a poll's: its exit is what the process waits for, as a child's in waitpid)
        return f"{who} polls {w.path} at {place}: only the exit of pid {h.pid} ends it"
    if w.kind in WRITTEN_BY_ANY:
        verb = "polls" if w.kind == "epoll" else "reads"
        return f"{who} {verb} {w.path} at {place}; pid {h.pid} holds it too, and could {ANY_HOLDER_COULD[w.kind]}"
    if w.kind in ("pipe_full", "socket_full"):
        return f"{v.label()} writes to {w.path}, which is full, at {place}; pid {h.pid} could read it"
    if w.kind == "semaphore" and wt is not None and (kind := notified(wt)) and not h.proven:
        if len(w.holders) > 1:
            return None
        return (
            f"{v.label()} waits for a multiprocessing {kind} ({w.path}) at {place}; pid {h.pid} could {NOTIFY[kind]} it"
        )
    return f"{v.label()} waits for a {what} ({w.path}) at {place}, held by pid {h.pid}"
