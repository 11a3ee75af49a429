"""The waits of a process that only it, or a signal to it, could end (the wait-for graph's edges to ``nobody`` and to
the senders of a signal; graph.py follows them):

- a thread waiting on a primitive of its own process that no living thread can release (a Python one; any private
  futex of a process left with one OS thread, as fork leaves it) -> nobody;
- the main thread waiting on a primitive of its own that a signal handler of its may end (a launcher waiting for
  its child's SIGCHLD, an Event a SIGUSR1 handler sets) -> its living children, which may send the signal;
- main waiting on a primitive of its own (or polling only its own wake-up socket, an event loop) that one thread of
  it alone could release, that thread blocked in a read -> that thread (its own node), and from it the read's other
  end; in a wait for a child -> the process is single-minded, its edge to the child that thread's;
- a process waiting for a DataLoader batch that no worker holds (it and every worker idle for the whole window)
  -> nobody;
- main waiting for the GIL that another thread of it holds while it waits in the kernel (a native call made without
  releasing it: ``ctypes.PyDLL``, a C extension) -> that thread's node, in the state its own wait gives it."""

from __future__ import annotations

from collections.abc import Callable

from hangwatch.diagnose import proof
from hangwatch.diagnose.acts import may_signal
from hangwatch.diagnose.chains import (
    ENDED_BY_EXIT,
    NOBODY_ENDS,
    OPEN_FILE_LOCKS,
    WRITTEN_BY_ANY,
    Edge,
    Node,
    pid_id,
    to_nobody,
)
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.state import ALIVE, Measured, moving, still, thread_state
from hangwatch.diagnose.views import IDLE_CPU_PERCENT, ProcessView, ThreadView, describe, innermost_user, may_exit
from hangwatch.diagnose.workers import worker_state
from hangwatch.records.evidence import CLOSED_KINDS, POLLED, READ_KINDS, LockWait


def thread_waits(v: ProcessView, scene: Scene) -> list[tuple[Edge, Node | None]]:
    """A thread of ``v`` waiting on its own process's primitive that no living thread can release: a Python one
    (``proof.unreleasable``), or any private futex of a process left with one thread (``proof.forsaken``)."""
    for t in v.threads if not v.ended else ():  # a process that exited in the look waits on nothing any more
        found = proof.nobody_releases(v, t)
        # waited for to exit, it waits for ever on an event of its own (a sidecar run until killed): the job may end it
        # (not a lock's wait, which no design waits out: fork's inherited one, an import's)
        sidecar = found is not None and proof.sync_wait(t) in proof.INTERRUPTIBLE and exit_awaited(scene, v)
        if sidecar and may_signal(scene, v) is not None:
            found = None
        fact = (
            (found[0] if found is not None else None)
            # a pause by design while the rest of the job works (a launcher's, a rank's that waits to be ended; the
            # workers may be a forkserver's children, not its own) is no hang: only where nothing else moves
            # (a sigwait for SIGTERM only where no other process of the job lives: a parent that would send it when
            # its own remote wait ends may look still)
            or (
                proof.unsignalled(v, t, alone=not scene.others_alive(v.pid))
                if moving(scene, besides=v.pid) is None and may_signal(scene, v) is None  # (nor may a Timer signal it)
                else None
            )
        )
        if fact is None:
            continue
        kind = (
            "signal"
            if proof.signal_alone(v, t)
            else "future"
            if proof.waits_on_future(t)
            else proof.sync_wait(t) or "lock"
        )
        at = proof.wait_place(t)
        words = f"{v.label()} thread '{t.name}' waits on {proof.article(kind)} {kind} at {at}"
        asleep = found is not None and found[0] == proof.all_asleep(v, t)  # (its fact, not the others')
        return [to_nobody(v.pid, kind, words, fact.fact, tid=t.tid, asleep=asleep)]
    return []


def exit_awaited(scene: Scene, v: ProcessView) -> bool:
    """Whether ``v``'s parent waits for a child's exit (wait4, waitid): ``v`` ending is what it waits for."""
    parent = scene.view(v.info.ppid)
    return parent is not None and any(o.last.syscall in ("wait4", "waitid") for o in parent.threads)


def signalled(scene: Scene, v: ProcessView, t: ThreadView, at: str) -> list[tuple[Edge, Node | None]]:
    """Main waits on a primitive of its own that nothing but a signal handler of its could end (``proof.unreleasable``
    but for the handler: ``proof.handler_may_end``), or for a signal alone that a handler of its catches, and children
    of it that may exit live: each may send the signal (its exit sends SIGCHLD), so the wait goes on to them, as one
    that may end by itself (a signal from elsewhere may come too: no proof through it). DataLoader and compile workers
    and multiprocessing's helpers send none."""
    sigwait = t.last.syscall == "sigwait" and t.blocked and t.waits_forever and proof.sealed_but(v, t.tid)
    pause = sigwait or (proof.signal_alone(v, t) and proof.handlers_may_run(v, proof.GOES_ON, unread=False))
    if t is not v.main_thread or not (
        pause or (proof.handler_may_end(v) and proof.unreleasable(v, t, handlers=False) is not None)
    ):
        return []
    kind, call = proof.sync_wait(t) or "event", "in sigwait()"
    said = (
        f"{v.label()} waits for a signal alone at {at}, "
        + ((call if t.last.fd is None else "reading a signalfd") if sigwait else "which a handler of its own catches")
        if pause
        else f"{v.label()} waits on {proof.article(kind)} {kind} at {at} that a signal handler of its own may end"
    )
    return [
        (
            Edge(
                pid_id(v.pid),
                pid_id(k.pid),
                "signal",
                f"{said}; its child pid {k.pid} may send the signal",
                timeout=True,
            ),
            None,
        )
        for k in senders(scene, v)
    ]


def senders(scene: Scene, v: ProcessView) -> list[ProcessView]:
    """The children of ``v`` that may send it a signal: living (not zombies), and neither DataLoader nor compile
    workers nor multiprocessing's helpers, which send none."""
    return [
        k
        for k in scene.children(v.pid)
        if not k.state.startswith("Z") and may_exit(k.role, k.info.cmdline, v.info.cmdline)
    ]


def self_wait(
    scene: Scene, v: ProcessView, me: str, w: LockWait, words: str, timed: bool | None
) -> list[tuple[Edge, Node | None]]:
    """A wait on a pipe or socket whose other end only ``v`` holds: an edge to the waiter itself. A poll among whose
    files it is (an event loop's own wake-up socket) that ``v`` catches a signal around, though: the signal's C
    handler writes to the wake-up socket (``signal.set_wakeup_fd``, which asyncio's ``add_signal_handler`` sets), so
    the wait goes on to the children of it that may send one, as one that may end by itself (SigCgt unread: no)."""
    kids = (
        senders(scene, v) if POLLED in (w.note or "") and proof.handlers_may_run(v, proof.HANDLED, unread=False) else []
    )
    if not kids:
        return [(Edge(me, me, w.kind, words, timed, tid=w.tid), None)]
    said = f"{words}; a signal it catches may write to it (a wake-up socket), and its child pid"
    return [
        (Edge(me, pid_id(k.pid), "signal", f"{said} {k.pid} may send one", timeout=True, tid=w.tid), None) for k in kids
    ]


def lost_batch(scene: Scene, v: ProcessView, t: ThreadView, at: str) -> tuple[Edge, Node] | None:
    """A process whose main thread waits for a DataLoader batch that no worker holds: it and every worker of it were
    measured idle for the whole window, each worker in its own wait for the next index. The main process hands out
    new work only when a batch comes back, so nobody will bring it (a batch lost on its way back)."""
    workers = scene.workers_of(v.pid) if scene.waits_for_batch(v) else []
    if not workers or not (t.measured and t.idle_throughout) or not still(v):
        return None
    for w in workers:
        wt = w.main_thread
        if wt is None or not (wt.measured and wt.idle_throughout) or worker_state(wt) != "idle" or not still(w):
            return None
    fact = (
        f"every worker ({len(workers)}) waited for work for the whole {v.duration_s:.0f} s window while "
        f"{v.label()} waited for a batch: no worker holds it, and the main process hands out new work only when a "
        "batch comes back"
    )
    return to_nobody(v.pid, "dataloader batch", f"{v.label()} waits for a DataLoader batch at {at}", fact, tid=t.tid)


def thread_id(pid: int, tid: int) -> str:
    """A thread's node id."""
    return f"thread:{pid}:{tid}"


def self_held(w: LockWait) -> bool:
    """Only the waiter holds its pipe's or socket's other end, by a search not cut short (that may miss a holder), or
    the file lock it waits for, through another open of the file (its own fdinfo lists it)."""
    return (
        (w.kind in ENDED_BY_EXIT or w.kind in OPEN_FILE_LOCKS or w.kind in WRITTEN_BY_ANY)
        and not w.holders
        and "the waiter itself" in (w.note or "")
        and "searched for" not in (w.note or "")
    )


def closed_readers(v: ProcessView) -> frozenset[int]:
    """The threads of ``v`` each blocked, with no timeout, reading a pipe or a socket (or writing to a full one), or
    polling only such files, whose other end ``v`` alone holds (``self_held``), where every other thread of it is
    parked on its own primitives (``proof.sealed_but``): only a thread of ``v`` could write what one of them waits
    for, and each that could is itself in such a wait, so none ever moves (a client and its own in-process server
    that each wait for the other to speak first). Empty where fewer than two, or where a signal handler may run."""
    tids = _threads_whose_waits(v, lambda w: self_held(w) and w.kind in CLOSED_KINDS)
    threads = [t for t in v.threads if t.tid in tids]
    if len(tids) < 2 or len(threads) != len(tids) or proof.handlers_may_run(v, proof.GOES_ON):
        return frozenset()
    if not all(t.blocked and t.last.timeout is not True for t in threads) or not proof.sealed_but(v, tids):
        return frozenset()
    return tids


def lock_pollers(v: ProcessView) -> frozenset[int]:
    """The threads of ``v`` whose every wait is for a file lock ``v`` holds itself, through another open of the file,
    with no timeout and no cancel callback: a ``flock()`` blocked in the kernel, or the ``filelock`` package's acquire
    (a non-blocking try each poll interval, for ever). Such a thread lets go of nothing until it gets the lock: awake,
    it acts no more than a parked one."""
    return _threads_whose_waits(v, lambda w: self_held(w) and w.kind in OPEN_FILE_LOCKS and w.timeout is False)


def _threads_whose_waits(v: ProcessView, each: Callable[[LockWait], bool]) -> frozenset[int]:
    """The threads of ``v`` with a followed wait, every one of which is ``each``."""
    mine: dict[int, list[LockWait]] = {}
    for w in v.ev.waits:
        mine.setdefault(w.tid, []).append(w)
    return frozenset(tid for tid, ws in mine.items() if all(each(w) for w in ws))


def held_here_hangs(v: ProcessView, tid: int, whole: bool) -> bool:
    """Whether thread ``tid``'s wait on a file whose other end only ``v`` holds never ends: every other thread of
    ``v`` is parked on its own primitives (``whole``: the wait is the process's; a side thread's, only where no signal
    handler may run on main to write it: an HTTP server's thread reading the keep-alive connection of a client that
    main, waiting for that server's shutdown, holds), or each that is not waits in turn on such a file
    (``closed_readers``), or polls for such a file lock itself (``lock_pollers``: a pool's threads each taking the
    lock its own process holds)."""
    if tid in closed_readers(v):
        return True
    pollers = lock_pollers(v)
    sealed = proof.sealed_but(v, pollers | {tid} if tid in pollers else frozenset((tid,)))
    # a Python handler runs on main inside its blocking read (EINTR, PEP 475) and may write what it reads (a handler
    # of its own timer's SIGALRM); a capture recorded before SigCgt was read: as the whole process's wait was judged
    return sealed and not proof.handlers_may_run(v, proof.GOES_ON, unread=not whole)


def acting_others(v: ProcessView, tid: int) -> list[ThreadView]:
    """The threads of ``v`` other than ``tid`` that may release what it waits for, or wake to (``proof.may_release``,
    ``proof.may_wake``); those that wait in a closed set with it (``closed_readers``) cannot."""
    closed = closed_readers(v)
    skip = (closed if tid in closed else frozenset((tid,))) | lock_pollers(v)  # (a poller lets go of nothing)
    return [o for o in v.threads if o.tid not in skip and (proof.may_release(o) or proof.may_wake(o))]


def others_may_act(v: ProcessView, tid: int) -> bool:
    """Whether a thread of ``v`` other than ``tid`` may act (``acting_others``)."""
    return bool(acting_others(v, tid))


def closed_words(v: ProcessView, tid: int) -> str:
    """What the other threads of a closed set (``closed_readers``) do, for the words of one of them, ``tid``."""
    closed = closed_readers(v)
    if tid not in closed:
        return ""
    others = [f"'{t.name}' at {describe(innermost_user(t.frames))}" for t in v.threads if t.tid in closed - {tid}]
    kinds = {w.kind.removesuffix("_full") for w in v.ev.waits if w.tid in closed - {tid}}
    what = f"a {kinds.pop()}" if len(kinds) == 1 and kinds <= {"pipe", "socket"} else "a file"  # (its kinds' word)
    return f"; the other threads that could end that wait ({', '.join(others)}) each wait on {what} only it holds too"


def side_read(v: ProcessView, t: ThreadView | None, w: LockWait) -> bool:
    """A thread other than main reads a pipe or a socket (the capture follows it where main is parked): its own node,
    that its process reaches only where main waits on what that thread alone could release (``released_by_thread``);
    a side thread's read stops nothing, so no rule names it."""
    return t is not None and t is not v.main_thread and w.kind in READ_KINDS and POLLED not in (w.note or "")


def polls_itself(v: ProcessView, t: ThreadView) -> bool:
    """``t`` polls with no timeout only files whose other end its own process alone holds: an event loop waiting on
    its own wake-up socket, which another thread of it writes (``call_soon_threadsafe``, an executor's result)."""
    mine = [w for w in v.ev.waits if w.tid == t.tid]
    return bool(mine) and all(POLLED in (w.note or "") and self_held(w) for w in mine)


def own_file_lock(v: ProcessView, t: ThreadView) -> LockWait | None:
    """The file lock ``t`` waits for that its own process holds, through another open of the file, or None."""
    return next((w for w in v.ev.waits if w.tid == t.tid and w.kind in OPEN_FILE_LOCKS and self_held(w)), None)


def sole_releaser(v: ProcessView, natives: bool = True) -> ThreadView | None:
    """The one thread of ``v`` that could end its main thread's wait: main waits with no timeout on a lock, event,
    condition or queue of its own process (or polls only its own wake-up socket, or joins the threads at the
    interpreter's exit), every other thread is parked on its own primitives or is library machinery, and that one is
    blocked for the whole window (in a read, a write, a wait for a child). Main's wait ends only when that thread's
    does: the process waits on what that thread waits on (graph.py draws it so)."""
    t = v.main_thread
    if t is None or not t.blocked or not t.waits_forever or t.last.shared_futex or proof.handler_may_end(v):
        return None
    polls, own = polls_itself(v, t), proof.exit_join(t) or own_file_lock(v, t)
    if polls and proof.handlers_may_run(v, proof.GOES_ON, unread=False):
        return None  # a handler's signal writes to the loop's wake-up socket too (add_signal_handler, set_wakeup_fd)
    if not polls and not own and proof.sync_wait(t) is None:
        return None
    able = [o for o in v.threads if o.tid != t.tid and (proof.may_release(o) or proof.may_wake(o))]
    # (the exit's join ends with the thread: one in a loop its state proves has no way out never lets it end; and
    # one asleep on a timer its state read, though not seen in every sample (a pool thread started as the look
    # began), is followed to that timer: left out, the wait was "blocked" and a healthy job was killed by the clock)
    m = thread_state(v, able[0]) if len(able) == 1 else None
    if m is None or not (able[0].blocked or _exit_never_ends(t, m) or m.state in TIMERS):
        return None  # two: a wait for either, none followed
    library = not (polls or own or proof.user_owned(t))
    if library and not proof.waits_on_future(t) and not proof.sealed_but(v, frozenset((t.tid, able[0].tid))):
        return None  # a library's primitive (socketserver's shutdown event): its machinery may end it, unless parked
    # (a Future's result: the one thread able to act is the executor's, which runs its work)
    # a native thread that is not parked (a library's core, which may run a Python callback) may act too
    rest = [o for o in v.threads if o.tid not in (t.tid, able[0].tid) and not o.has_stack]
    quiet = all(o.parked and o.last.syscall in ("futex", "pause") for o in rest)
    return able[0] if quiet or not natives else None


def _exit_never_ends(t: ThreadView, m: Measured) -> bool:
    """Main (``t``) is in the interpreter's exit, joining a thread whose state (``m``) proves a loop with no way out."""
    return proof.exit_join(t) and m.state == "looping" and m.proves_hang


TIMERS = frozenset({"asleep", "long_sleep"})  # a sole releaser's own timed wait: ends within the bounds, or after
CHANGED = frozenset({"started", "ended"})  # a sole releaser new in the look (a pool's next thread) or gone: a change


def released_by_thread(
    v: ProcessView, t: ThreadView, at: str, side: dict[int, list[tuple[Edge, Node | None]]]
) -> list[tuple[Edge, Node | None]] | None:
    """Main's wait that one thread alone could end (``sole_releaser``), that thread blocked in a read the capture
    followed (``side``: each side thread's read edges, and what follows them): an edge to the thread's node, whose own
    edges go to the read's other end (a reader thread that fills the queue from a socket or a child's pipe); or that
    thread in a timed wait of its own (a ``threading.Timer``'s): its node in the state its timer gives, asleep (alive)
    where the timer ends within the job's bounds, ``long_sleep`` (proof) where it ends after them."""
    o = sole_releaser(v)
    only = f"only its thread '{o.name}'" if o is not None else ""  # (where every other thread is parked: proof)
    if o is None and (alive := sole_releaser(v, natives=False)) is not None and alive.tid not in side:
        # a native thread that is not parked may act too: no proof through the one Python thread, but where that
        # thread is asleep on a timer within the bounds, following it can only say alive (not a wait left unfollowed)
        state = thread_state(v, alive)
        o = alive if state.state == "asleep" and not state.proves_hang else None
        only = f"of its Python threads only '{alive.name}' (a native thread of it that runs may too)"
    timer = thread_state(v, o) if o is not None and o.tid not in side else None
    # (or, joined at the exit, a loop its state proves has no way out: the join never ends)
    if o is None or (timer is not None and timer.state not in TIMERS | CHANGED and not _exit_never_ends(t, timer)):
        return None
    lock = own_file_lock(v, t)
    kind = "join" if proof.exit_join(t) else "file lock" if lock else proof.sync_wait(t) or "poll"
    node_id = thread_id(v.pid, o.tid)
    read_at = describe(innermost_user(o.frames) or o.frames[0]) if o.frames else "its native code"
    if lock is not None:
        words = (
            f"{v.label()} waits for a file lock on {lock.path} at {at} that it holds itself, through another open of "
            f"the file; {only} could release it"
        )
    elif kind == "poll":
        words = f"{v.label()} polls its own wake-up socket at {at}, which {only} could write to"
    else:
        verb = NOBODY_ENDS.get(kind, ("", "release it"))[1]  # (what ends a wait on it: set an event, put to a queue)
        words = f"{v.label()} waits on {proof.article(kind)} {kind} at {at}; {only} could {verb}"
    if len(v.threads) > 2 and only.startswith("only"):
        words += " (its other threads are parked in waits of their own with no timeout, or are library machinery)"
    label = f"thread '{o.name}' of {v.label()}"
    if timer is not None:  # in a timed wait of its own (a Timer's): its timer says when it may act
        node = Node(node_id, label, timer.state, timer.fact, proves_hang=timer.proves_hang, measured=o.measured)
        return [(Edge(pid_id(v.pid), node_id, kind, words, timeout=False, tid=t.tid), node)]
    fact = f"blocked for the whole window in {o.last.syscall}() at {read_at}"
    node = Node(node_id, label, "blocked", fact, single_minded=True, measured=o.measured)
    return [(Edge(pid_id(v.pid), node_id, kind, words, timeout=False, tid=t.tid), node), *side[o.tid]]


GIL_WAIT_S = 0.05  # a thread waiting for the GIL waits on its condition in slices of sys.getswitchinterval() (5 ms)


def gil_wait(v: ProcessView, t: ThreadView, at: str) -> list[tuple[Edge, Node | None]]:
    """Main waiting for the GIL, held by another thread of its process in every sample while that thread waited in
    the kernel (a native call that did not release it): main's own wait, whatever its line says, ends only when
    that thread's call returns. Main is read waiting on a futex in short slices (the GIL's switch interval: it asks
    the holder to drop it, and waits again, for ever), holding the GIL in no sample, its stack the same; the holder's
    node takes the state its own wait gives it (a sleep's timer, a read). Nothing else of the process can run Python
    meanwhile: no other thread, no signal handler."""
    if t is not v.main_thread or not t.has_stack or t.stack_changed or v.ended:
        return []
    waits = [s for s in t.samples if s.state != "R"]  # (one caught between two slices, woken, reads running)
    if len(waits) < 2 or any(s.owns_gil for s in t.samples):
        return []
    if any(s.syscall != "futex" or s.wakes_in is None or s.wakes_in > GIL_WAIT_S for s in waits):
        return []
    o = next(
        (
            o
            for o in v.threads
            if o.tid != t.tid
            and o.has_stack
            and all(s.owns_gil is True and s.state in ("S", "D") for s in o.samples)
            and len(o.samples) == len(t.samples)
        ),
        None,
    )
    if o is None:
        return []
    m = thread_state(v, o)
    if m.state not in TIMERS:  # blocked in a read: its other end not followed from here, so no edge (main wakes)
        return []
    node_id = thread_id(v.pid, o.tid)
    call = next((s.syscall for s in reversed(o.samples) if s.syscall), None)  # (a stack read may have restarted it)
    in_call = f"{call}()" if call else "a native call"
    words = (
        f"{v.label()} needs the GIL to go on at {at}, which its thread '{o.name}' held in every sample while it "
        f"waited in {in_call} at {describe(innermost_user(o.frames))}"
    )
    node = Node(
        node_id,
        f"thread '{o.name}' of {v.label()}",
        m.state,
        m.fact,
        proves_work=m.proves_work,
        proves_hang=m.proves_hang and m.state in ("long_sleep", "looping"),
        measured=o.measured,
    )
    return [(Edge(pid_id(v.pid), node_id, "gil", words, timeout=False, tid=t.tid), node)]


def blocked_throughout(t: ThreadView) -> bool:
    """Blocked for the window as py-spy reads it, or by the kernel's view alone: asleep (S or D) in every sample of a
    measured window, never woken, at no CPU: in one call for the whole window, whatever py-spy calls it (a write()
    into a full pipe reads as running)."""
    return t.blocked or (
        t.measured
        and all(s.state in ("S", "D") for s in t.samples)
        and (t.wakeups or 0) == 0
        and ((t.cpu_percent or 0.0) <= IDLE_CPU_PERCENT)
    )


def others_wait_on(v: ProcessView, n: Node, edges: list[Edge]) -> frozenset[str] | None:
    """The nodes its main thread and the threads of ``v`` that could act (``acting_others``) wait on, each blocked for
    the window in followed waits with no timeout, at no CPU, with no signal handler that may let it go on; None where
    one of them waits on nothing followed (a poll of a listening socket: a client may come), or may act. A loop of
    waits through them all is closed (``graph._follow``): an event loop awaiting a child's output while its child
    watcher thread waits for that child's exit, the child reading what it holds."""
    main = v.main_thread
    if main is None or n.state in ALIVE or (v.cpu_percent or 0.0) > IDLE_CPU_PERCENT:
        return None
    if proof.handlers_may_run(v, proof.GOES_ON) or any(proof.native_may_act(o) for o in v.threads if o is not main):
        return None  # (a thread whose stack was not read may act too: a native library's I/O thread)
    out: set[str] = set()
    for o in (main, *acting_others(v, main.tid)):
        mine = [e for e in edges if e.waiter == thread_id(v.pid, o.tid) or (e.waiter, e.tid) == (n.id, o.tid)]
        waits = [w for w in v.ev.waits if w.tid == o.tid]
        if not mine or not blocked_throughout(o) or any(e.timeout is not False for e in mine):
            return None
        if any(not w.holders and not self_held(w) for w in waits):
            return None  # a file it waits on that was followed to no holder: anyone may end that wait
        out.update(e.holder for e in mine)
        # every holder of what it waits on, each an edge or not (one of several sharers of a semaphore; a file that
        # it holds too, followed to none of them): the loop is closed only where each of them is on it
        out.update(pid_id(h.pid) for w in waits for h in w.holders if h.pid != v.pid)
    return frozenset(out)
