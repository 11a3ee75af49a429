"""Names waits on another process: a file lock (io.lock_wait), a multiprocessing lock or semaphore (io.lock_wait,
or code.deadlock when its holder waits for the waiter, or nobody can release it), a pipe's or a socket's other end
and a FIFO's open (process.waits_on).

A namer says who holds what, as capture/waits.py measured it; the verdict is the wait-for graph's (its edge to the
holder, or to nobody, and the chain followed from there: diagnose/graph.py). A holder outside the job's tree is
named (pid, user, command, age), never touched.
"""

from __future__ import annotations

import itertools
import re

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose import proof, served
from hangwatch.diagnose.chains import STATE_WORDS
from hangwatch.diagnose.holding import (
    KIND_TEXT,
    NOTIFY,
    age_text,
    deciding_holder,
    holder_doing,
    holder_text,
    lock_fix,
    notified,
    wait_frame,
)
from hangwatch.diagnose.own import held_here_hangs, lock_pollers, self_held, side_read
from hangwatch.diagnose.process import at_prompt, reads_a_queue
from hangwatch.diagnose.scene import Hit, Scene, named_at
from hangwatch.diagnose.state import holder_process_state, holder_state, moving
from hangwatch.diagnose.views import (
    ProcessView,
    ThreadView,
    describe,
    described,
    innermost_explaining,
    innermost_user,
    size_text,
)
from hangwatch.fixes import PIPE_WAIT_FIX, SELF_WAIT_FIX, SOCKET_WAIT_FIX
from hangwatch.records.evidence import ANY_HOLDER_KINDS, POLLED, Frame, LockHolder, LockWait, Role
from hangwatch.records.values import frozen


def lock_wait_rule(scene: Scene) -> list[Hit]:
    """io.lock_wait: a thread waits for a file lock another process holds (and, outside DataLoader workers,
    for a multiprocessing lock or semaphore another process holds)."""
    hits = []
    piped: set[int] = set()
    for v in scene.views:
        for w in v.ev.waits:
            t = next((t for t in v.threads if t.tid == w.tid), None)
            if t is None or (w.kind == "semaphore" and v.role == Role.DATALOADER_WORKER):
                continue  # a worker's semaphore wait is judged with its main process (dataloader rule)
            if side_read(v, t, w):
                continue  # a side thread's read stops nothing: the graph follows it where main waits on that thread
            if sg.waits_for_work(t.frames):
                continue  # a pool worker waiting for the task queue's read lock: idle, not stuck
            if w.kind == "semaphore":
                hits.extend(semaphore_wait(v, t, v.label(), waiter_of=None, waits=None))
                continue
            if w.kind in ANY_HOLDER_KINDS | {"pipe_full", "socket_full", "pidfd"}:
                continue  # a writer waiting for its readers, an eventfd's reader, a pidfd's: edges of the graph
            if w.kind == "fifo_open":
                hits.append(_fifo_open(scene, v, t, w))
                continue
            if POLLED in (w.note or "") and (
                not w.holders or sum(POLLED in (x.note or "") for x in v.ev.waits if x.tid == w.tid) > 1
            ):
                continue  # one file of a poll that any other may end, or only its own: the graph weighs them all
            if w.kind in ("pipe", "socket"):
                pipe_hit = None if t.tid in piped else _pipe(scene, v, t, w)  # a poll on two pipes: one finding
                if pipe_hit is not None:
                    piped.add(t.tid)
                    hits.append(pipe_hit)
                continue
            hit = _file_lock(v, t, w)
            if hit is not None:
                hits.append(hit)
    return hits


FIFO_OPEN_FIX = (
    "Start the process that opens the FIFO's other side before this open, and make sure it runs (its launch may "
    "have failed); or open it with `os.open(path, os.O_RDONLY | os.O_NONBLOCK)` and wait for data with a timeout "
    "(`select.select([fd], [], [], timeout)`), so that a missing writer is an error, not a hang.",
)


def _fifo_open(scene: Scene, v: ProcessView, t: ThreadView, w: LockWait) -> Hit:
    """process.waits_on: a thread in ``open()`` of a FIFO that no process has open the other way. Who may still
    open it cannot be known (any process may): the graph's edge to the rest of the job, alive while anything of it
    moves."""
    frame = innermost_user(t.frames)
    at = described(frame)
    moves = moving(scene)
    summary = (
        f"{v.label()} waits in open() of the FIFO {w.path} at {describe(frame)}: {w.note}, and no process has it "
        "open that way now"
        + (
            f". Something in the job still moves ({moves}): it may be the one to open it."
            if moves
            else "; nothing else in the job moves that could."
        )
    )
    facts = (f"{v.label()} at {at}: blocked in open() of {w.path} (the kernel's wait_for_partner)",)
    return named_at(v, t, frame, Cause.PROCESS_WAITS_ON, 0.7 if moves else 0.8, summary, facts, FIFO_OPEN_FIX)


EVENT_SETTER_FIX = (
    "The process that was to set it exited first (returned early, raised, or was killed), or waits itself for what "
    "this wait holds up: wait with a timeout and check that the setter is alive (`ev.wait(60)` in a loop with "
    "`p.is_alive()`), set it in a `finally:`, and set it before joining the process that waits for it.",
)

QUEUE_ROOM_FIX = (
    "A put to a full `multiprocessing.Queue(maxsize=...)` waits until another process gets from it: get every item "
    "before joining the process that puts them (a child cannot end while its put waits), or put with a timeout "
    "(`q.put(x, timeout=60)` raises queue.Full).",
)
BARRIER_FIX = (
    "A party never reached the barrier: a process that was to call `wait()` exited first (raised, returned early, "
    "was killed) or was never started, or `Barrier(n)` counts more parties than call it: give `wait()` a timeout "
    "(`b.wait(60)` breaks the barrier for every party, with BrokenBarrierError), and make n the number of processes "
    "that reach it.",
)

QUEUE_TASKS_FIX = (
    "A `JoinableQueue.join()` waits for a `task_done()` for every item put, and the process that got an item exited "
    "(raised, returned early, was killed) before it called one: call `task_done()` in a `finally:` after each `get()`, "
    "and before joining the queue, check that its consumers are alive (or join them with a timeout first).",
)

NOTIFIED_FIX = {
    "barrier": BARRIER_FIX,
    "queue's room": QUEUE_ROOM_FIX,
    "queue's unfinished tasks": QUEUE_TASKS_FIX,
}  # an event's and a condition's: the setter's


def _file_lock(v: ProcessView, t: ThreadView, w: LockWait) -> Hit | None:
    if not w.holders and w.kind == "soft" and w.note and "no process has it open" in w.note:
        return _unheld_soft_lock(v, t, w)
    if not w.holders and w.kind == "soft" and w.note and "another host may hold it" in w.note:
        return _unheld_soft_lock(v, t, w, shared=True)
    if self_held(w):  # another thread of it that could release it: the graph follows it, or the samples decide
        return _own_file_lock(v, t, w) if held_here_hangs(v, t.tid, whole=True) else None
    if not w.holders:
        return None  # nobody holds it now: the waiter gets it at its next try
    h = w.holders[0]
    state = holder_state(h)
    frame = innermost_user(t.frames)
    forever = "with no timeout" if w.timeout is False else "with a timeout" if w.timeout else ""
    alarm = proof.alarmed(v) if t.tid == v.pid and w.timeout is False else None  # (its own timer may interrupt it)
    forever += f" in its call, but {alarm}" if alarm else ""
    what = f"{KIND_TEXT.get(w.kind, 'a lock')} on {w.path}"
    summary = (
        f"{v.label()} waits for {what}{' ' + forever if forever else ''}, held by {holder_text(h)}, which "
        f"{holder_doing(h, state)}."
    )
    ev = [
        f"{v.label()} at {described(frame)}" + f": waiting for {what}",
        f"the kernel's /proc/locks lists pid {h.pid} as holding it"
        if h.proven and "/proc/locks" in h.how
        else f"pid {h.pid} {h.how}",
        *holder_lines(h),
    ]
    if len(w.waiters) > 1:
        ev.append(f"{len(w.waiters)} processes wait for it: pids {', '.join(map(str, w.waiters))}")
    return named_at(v, t, frame, Cause.IO_LOCK_WAIT, 0.85 if state == "working" else 0.92, summary, ev, lock_fix(w, h))


def holder_lines(h: LockHolder, how: bool = False) -> list[str]:
    """What was read of holder ``h`` (with ``how``, how it holds), and where it is, where a frame of it was read."""
    hf = wait_frame(h.frames)
    return [
        f"holder pid {h.pid}: {f'{h.how}; ' if how else ''}state {h.state or 'gone'}, {h.cpu_percent or 0:.0f}% CPU, "
        f"{size_text(h.moved_bytes or 0)} read or written over the look, {age_text(h.age_s)}",
        *([f"holder pid {h.pid} is at {described(hf)}"] if hf is not None else []),
    ]


def _pipe(scene: Scene, v: ProcessView, t: ThreadView, w: LockWait) -> Hit | None:
    """process.waits_on: the main thread reads a pipe (or a socket whose other end is on this host); its writers
    (the holders of the other end) decide. Children holding it are the child.wait rule's (it judges the child);
    a holder outside the job, or one that left the job's tree, is named here."""
    if w.path == v.info.stdin and at_prompt(t):
        return None  # a prompt on its standard input: the input rule names it, with the same writers
    if w.kind == "socket":
        return _socket(scene, v, t, w)
    frame = innermost_user(t.frames)
    at = f"{described(frame)}"
    own_end = bool(w.note and "the waiter itself" in w.note)
    tree = {d.pid for d in scene.descendants(v.pid)}
    if w.holders and all(h.in_job and h.pid in tree for h in w.holders):
        return None  # its own subprocesses (a compiler, a shell and what it ran): the child's and compile's rules
    if frame is None and w.holders and all(h.in_job and scene.view(h.pid) is not None for h in w.holders):
        return None  # a native process (sort) fed by one of the job's: named at that one's line (the graph's edge)
    if not w.holders:
        if not own_end:
            return None  # nobody else was found (a search cut short): nothing to say
        summary = (
            f"{v.label()} reads a pipe ({w.path}) at {describe(frame)} whose only write end it holds itself: "
            "no other process can write to it or close it, so the read never ends"
            # (a native thread in a read or a poll, a TCPStore server's, may write too; so may a handler, on main)
            + (" unless another thread of it writes." if not proof.sealed_but(v, t.tid) else _handler_may_write(v))
        )
        facts = (f"{v.label()} at {at}: blocked in {t.last.syscall}() on {w.path}", str(w.note))
        return named_at(
            v,
            t,
            frame,
            Cause.PROCESS_WAITS_ON,
            0.85,
            summary,
            facts,
            SELF_WAIT_FIX["queue" if any(reads_a_queue(f) for f in t.frames) else "pipe"],
        )
    return _other_end(scene, v, t, w)


def _handler_may_write(v: ProcessView) -> str:
    """The end of a sentence that said a wait on the process's own file never ends: unless a signal handler of it,
    which Python runs on main inside the read, writes to it (its own timer's, where it catches SIGALRM)."""
    if not proof.handlers_may_run(v, proof.GOES_ON, unread=False):
        return "."
    timer = f": {proof.TIMER_WORDS}" if proof.caught(v, proof.SIGALRM) else ""
    return f" unless a signal handler of its own writes to it{timer}."


@frozen
class _End:
    """How a finding speaks of the other end of what a thread reads: a pipe's write end, a socket's peer."""

    reads: str  # what the waiter does, with {path}
    end: str
    who: str
    fix: tuple[str, ...]
    outside: str  # the first fix when the holder is outside the job, with {pid}


_ENDS = {
    "pipe": _End(
        "reads a pipe ({path})",
        "its write end",
        "writer",
        PIPE_WAIT_FIX,
        "pid {pid} outside the job holds the pipe's write end: the read ends when it writes or exits; end it "
        "if it is a leftover (`kill {pid}`); hangwatch only ever ends the job's own processes.",
    ),
    "socket": _End(
        "waits for an answer on {path}",
        "the other end",
        "peer",
        SOCKET_WAIT_FIX,
        "pid {pid} outside the job holds the other end: the read ends when it answers or exits; restart it "
        "if it is stuck; hangwatch only ever ends the job's own processes.",
    ),
}


def _socket(scene: Scene, v: ProcessView, t: ThreadView, w: LockWait) -> Hit | None:
    """process.waits_on: the main thread reads a socket with no timeout whose other end a process on this host
    holds (a local server, a helper): what that process does decides. A helper of its own that is not working
    is left to the rules that judge that helper (its own deadlock, its own wait)."""
    if not w.holders:
        return None  # nobody found: the network rule's
    if (hit := served.request_named(scene, v, t, w)) is not None:
        return hit  # a Manager's server running requests, which only another request could end
    tree = {d.pid for d in scene.descendants(v.pid)}
    if all(h.in_job and h.pid in tree for h in w.holders) and not any(holder_state(h) == "working" for h in w.holders):
        return None
    return _other_end(scene, v, t, w)


def _doing(scene: Scene, h: LockHolder, state: str) -> str:
    """What holder ``h`` does, in words: a process of the job as the state module reads it (its threads too: a
    server whose main thread polls), else as the holder was read."""
    view = scene.view(h.pid) if h.in_job else None
    if view is None:
        return holder_doing(h, state)
    m = holder_process_state(view)
    said = "doing what could not be read" if m.state == "unknown" else STATE_WORDS.get(m.state, m.state)
    return f"is {said}: {m.fact}"


def _other_end(scene: Scene, v: ProcessView, t: ThreadView, w: LockWait) -> Hit:
    """The finding for a read that the holders of the other end decide (the graph's edges to each): named at the one
    that ends it soonest, what it does said: of a process of the job, the state module's reading (as the graph's
    node has it), not the holder's coarser one."""
    words = _ENDS[w.kind]  # (a pipe's or a socket's: _pipe sends no other)
    frame = innermost_user(t.frames)
    shown = innermost_explaining(t.frames)  # the user's frame; else (`python -c`) `<string>`
    at = f"{described(shown)}"
    states = {h.pid: holder_state(h) for h in w.holders}
    h = deciding_holder(w.holders)
    state = states[h.pid]
    summary = (
        f"{v.label()} {words.reads.format(path=w.path)} at {describe(shown)}; "
        + (f"{sg.NOT_ACCEPTED} held by " if sg.NOT_ACCEPTED in h.how else f"{words.end} is held by ")
        + f"{holder_text(h)}, which "
        + (
            "exited during the look, as every other holder did: the read gets its end of file."
            if state == "gone"
            else f"{_doing(scene, h, state)}."
        )
    )
    ev = [
        f"{v.label()} at {at}: blocked in {t.last.syscall}() on {w.path} with no timeout",
        *holder_lines(h, how=True),
    ]
    if len(w.holders) > 1:
        ev.append(f"{words.who}s: " + ", ".join(f"pid {x.pid} {states[x.pid]}" for x in w.holders[:8]))
    if w.note:
        ev.append(w.note)
    fix = words.fix if h.in_job else (words.outside.format(pid=h.pid), *words.fix[1:])
    return named_at(
        v,
        t,
        frame,
        Cause.PROCESS_WAITS_ON,
        0.5 if state == "gone" else 0.8 if state in ("working", "asleep") else 0.9,
        summary,
        ev,
        fix,
    )


OWN_FILE_LOCK_FIX = (
    "Lock the file once per process and share that lock: keep one open file (one lock object) per path and pass it "
    "to the code that needs it, or use a reentrant one (filelock's `FileLock(path, is_singleton=True)`, whose nested "
    "`with` counts). A flock or OFD lock belongs to the open file, so a second `open()` of the same path in the same "
    "process waits for the first, forever where nothing else of it releases the first.",
    "Acquire with a timeout (`FileLock(path, timeout=...)`, `fcntl.flock(fd, LOCK_EX | LOCK_NB)` in a bounded retry "
    "loop), so a lock that cannot come raises instead of hanging.",
)


def _waiting_for(v: ProcessView, frame: Frame | None, w: LockWait) -> str:
    """Where ``v`` waits for the lock file of ``w``, with the line's code, in words."""
    return f"{v.label()} at {described(frame)}" + f": waiting for {w.path}"


def _own_file_lock(v: ProcessView, t: ThreadView, w: LockWait) -> Hit:
    """A file lock the waiter's own process holds, through another open of the file, with no other thread of it that
    could release the first (the graph's edge from the process to itself decides); a signal handler of it may still
    end the wait (``signal.alarm`` around a lock, its usual timeout): then nothing is proven."""
    frame = innermost_user(t.frames)
    forever = " with no timeout" if w.timeout is False else ""
    handled = proof.handlers_may_run(v, proof.GOES_ON)
    pollers = len(lock_pollers(v) - {t.tid})
    who = v.label() if t is v.main_thread else f"{v.label()} thread '{t.name}'"
    summary = (
        f"{who} waits{forever} for {KIND_TEXT.get(w.kind, 'a lock')} on {w.path} at {describe(frame)}, which "
        "its process holds itself through another open of the same file: the lock belongs to that open file, so this "
        "one waits for it to be released, and no other thread of the process runs that could release it"
        + (f" ({pollers} more poll for it the same way)" if pollers else "")
        + ("; only a signal handler of it (it has one) could end the wait." if handled else ".")
    )
    facts = (_waiting_for(v, frame, w), str(w.note))
    # a lock of its own: a bug at this line, not a holder elsewhere to wait out
    return named_at(v, t, frame, Cause.CODE_DEADLOCK, 0.6 if handled else 0.92, summary, facts, OWN_FILE_LOCK_FIX)


def _unheld_soft_lock(v: ProcessView, t: ThreadView, w: LockWait, shared: bool = False) -> Hit:
    """A soft lock file that exists with no process of this host holding it open. On a local filesystem it was left
    behind by a holder that crashed or was killed, and nothing will delete it (the graph's edge to nobody). On one
    other hosts share, a process on another host may hold it (a shared cache that node 0 fills): named, not proven."""
    frame = innermost_user(t.frames)
    forever = " with no timeout" if w.timeout is False else ""
    lock = f"{KIND_TEXT['soft']} on {w.path}"
    if shared:
        summary = (
            f"{v.label()} waits{forever} for {lock}, on a filesystem other hosts share, which no process of this host "
            "holds: a process on another host may hold it (a shared cache being filled), or a holder that is gone "
            "left it behind."
        )
        first = (
            f"Check the other hosts that share {w.path} for a process that holds it (`lsof {w.path}` on each); if "
            f"none does, delete the stale lock file: rm {w.path}."
        )
    else:
        summary = (
            f"{v.label()} waits{forever} for {lock}, which no process holds: it was left behind by a holder that is "
            "gone (an interrupted download, a killed job), and nothing will delete it."
        )
        first = f"Delete the stale lock file: rm {w.path} (no process has it open), then run again."
    facts = (_waiting_for(v, frame, w), str(w.note))
    return named_at(
        v,
        t,
        frame,
        Cause.IO_LOCK_WAIT,
        0.6 if shared else 0.9,
        summary,
        facts,
        (
            first,
            "Acquire with a timeout (FileLock(path, timeout=...)), and prefer FileLock to SoftFileLock where the "
            "filesystem supports flock: a kernel lock goes away with its holder"
            + ("; with a cache several nodes share, fill it from one node before the others start." if shared else "."),
        ),
    )


BLOCKING_CALL = re.compile(r"(\.|\b)(acquire|wait|sleep|get|join|recv|read|select|poll)\(")


def interrupted_wait(frames: tuple[Frame, ...]) -> tuple[Frame, Frame] | None:
    """A signal handler run inside a wait of the same thread, from its frames: a user function whose caller sits on
    a blocking call that names no Python function of it (``self._wait_semaphore.acquire(True, timeout)``, a
    ``time.sleep``): Python runs a handler only between bytecodes or in a wait interrupted by the signal. The
    handler's frame and the interrupted one, or None."""
    for inner, outer in itertools.pairwise(frames):
        code = outer.code or ""
        if sg.is_user(inner) and BLOCKING_CALL.search(code) and sg.method(inner) not in code:
            return inner, outer
    return None


def _nobody_holds(v: ProcessView, t: ThreadView, w: LockWait, name: str, ev: list[str]) -> Hit | None:
    """Nobody holds the shared lock ``w`` and every process that shares it waits for it (its count is 0): its holder
    died holding it, or a signal handler runs inside this very thread's wait, or, for an event, a barrier or a
    condition (nobody holds those), whoever was to end the wait has exited."""
    if w.value != 0 or not w.waiters:
        return None
    frame, handler = innermost_user(t.frames), interrupted_wait(t.frames)
    event = notified(t)  # an event, a barrier, a condition is not held: what is gone is whoever was to end it
    lock = f"a multiprocessing {event}" if event else f"`{w.name}`" if w.name else "a multiprocessing lock"
    fix = NOTIFIED_FIX.get(event, EVENT_SETTER_FIX) if event else (*DIED_HOLDING_FIX, *lock_fix(w, None))
    if handler is not None:
        why = (
            f"in {handler[0].function}, a signal handler that interrupted this very thread's wait at "
            f"{describe(handler[1])}: only this thread could release it, and it is in the handler"
        )
        fact = f"the frames show a signal handler ({handler[0].function}) run inside this thread's own wait at "
        fact += describe(handler[1])
    elif event:
        why = f"which no living process can {NOTIFY[event]}: every process that shares it waits on it"
        fact = f"no process that shares it is outside a wait on it: the one that was to {NOTIFY[event]} it has exited"
    else:
        why = "whose holder is gone (or is this very thread, re-entering it): every process that shares it waits for it"
        fact = (
            "no process that shares it is outside a wait for it: the one that took it is gone (a process that dies "
            "holding a multiprocessing lock never releases it), or it is a waiter itself"
        )
    forever = " with no timeout" if w.timeout is False else ""
    said = f"{name} waits{forever} for {lock} at {describe(frame)}, {why}; its count is 0."
    return named_at(v, t, frame, Cause.CODE_DEADLOCK, 0.9, said, [*ev, fact], fix)


DIED_HOLDING_FIX = (
    "A process died while it held the lock (killed, or crashed): the lock is never released. Restart the job; take "
    "such locks with `with lock:` so an exception releases them.",
)


def semaphore_wait(
    v: ProcessView, t: ThreadView, name: str, waiter_of: ProcessView | None, waits: str | None
) -> list[Hit]:
    """A thread of ``v`` waits for a multiprocessing lock or semaphore shared with other processes: what
    is known of its holder, and no more. ``waiter_of``: the process that waits for ``v`` (a DataLoader
    worker's main process), so that a holder waiting for the waiter is a cycle."""
    w = next((w for w in v.ev.waits if w.tid == t.tid and w.kind == "semaphore"), None)
    if w is None or not t.blocked:
        return []
    frame = innermost_user(t.frames)
    lock = f"`{w.name}`" if w.name else "a multiprocessing lock"
    forever = " with no timeout" if w.timeout is False else ""
    count = (
        f"; its count is {w.value} (taken)"
        if w.value == 0
        else (f"; its count is {w.value}" if w.value is not None else "")
    )
    ev = [
        *([waits] if waits else []),
        f"{name} blocked at {described(frame)}"
        + f": a futex wait{forever} on a semaphore shared between processes ({w.path})",
        f"processes of the job that share it: {', '.join(map(str, w.sharers))}; waiting for it: "
        f"{', '.join(map(str, w.waiters))}{count}",
    ]
    fix = lock_fix(w, None)
    if not w.holders:
        hit = _nobody_holds(v, t, w, name, ev)
        return [hit] if hit is not None else []
    h = w.holders[0]
    state = holder_state(h)
    role = "main" if waiter_of is not None and h.pid == waiter_of.pid else f"pid {h.pid}"
    what = notified(t) if not h.proven else None  # nobody holds an event: a process that shares it is to set it
    setter = what is not None
    if what is not None:
        lock = f"`{w.name}`" if w.name else f"a multiprocessing {what}"
        who = (
            f"which {role}"
            + (f" (pid {h.pid})" if role == "main" else "")
            + f" could {NOTIFY[what]} (it shares it and does not wait on it)"
        )
    elif h.proven:
        who = f"held by {role} (pid {h.pid}), whose frame holds it" if role == "main" else f"held by pid {h.pid}"
    else:
        who = (
            f"held by another process of the job, most likely {role}"
            + (f" (pid {h.pid})" if role == "main" else "")
            + ", which is not waiting for it"
        )
    ev.append(f"pid {h.pid} {h.how}" + (f"; its code {h.took_at}" if h.took_at else ""))
    ev.append(f"pid {h.pid}: state {h.state or 'gone'}, {h.cpu_percent or 0:.0f}% CPU over the window")
    cycle = waiter_of is not None and h.pid == waiter_of.pid
    if cycle and waits:
        ev.append(f"{role} (pid {h.pid}) waits for {name}'s batch meanwhile")
    head, doing = f"{name} waits{forever} for {lock} at {describe(frame)}, {who}; ", f"it {holder_doing(h, state)}."
    cause, sure = Cause.IO_LOCK_WAIT, 0.93 if h.proven else 0.85
    if setter and not cycle:
        # An event or condition is not held: its semaphore sits at 0 until someone sets it, and the one sharer that
        # does not wait on it is the one that could. What that sharer does (asleep in timed steps, working, blocked
        # on the waiter) is the chain's to judge; the words say only who could set it and what it does.
        cause, sure = Cause.PROCESS_WAITS_ON, 0.7 if state in ("asleep", "working") else 0.8
        fix = NOTIFIED_FIX.get(what or "", EVENT_SETTER_FIX)
    elif state == "working":
        head, doing, sure = (
            f"{name} waits for {lock} at {describe(frame)}, {who}; ",
            f"it works ({holder_doing(h, state)}).",
            0.8,
        )
    elif cycle:
        doing = f"{role} waits for that worker's batch meanwhile: a deadlock across processes."
        cause, sure, took = Cause.CODE_DEADLOCK, 0.93, f" (its code {h.took_at})" if h.took_at else ""
        first = f"{'Set' if setter else 'Release'} {lock} in {role} before iterating the DataLoader{took}"
        fix = (f"{first}, or do not take it in dataset code.", *fix)
    return [named_at(v, t, frame, cause, sure, head + doing, ev, fix)]
