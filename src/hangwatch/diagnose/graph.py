"""The wait-for graph: who waits on whom, and whether the end of the chain can ever move.

Nodes are the job's processes (a thread where the wait is a thread's), the processes outside the job that
hold something it waits on, and a person (the terminal). Edges go from a waiter to what could release it,
each with the resource and the measured fact it was read from:

- a process waiting for its child (``waitpid``, ``subprocess``, a read of the child's pipe) -> the child;
- a process waiting for a DataLoader batch -> its workers;
- a thread waiting for a file lock or a semaphore another process holds -> the holder (in the job or not);
- a thread reading a pipe, or a socket whose other end is on this host (a unix socket, a loopback connection)
  -> every process holding the other end, found by inode (in the job or not);
- a holder outside the job that waits for its children with no timeout (``wait4``: `flock FILE cmd`) -> those
  children (a wait for any of several: no proof through it);
- a thread reading the terminal (its standard input one) -> a person; at a prompt on a pipe -> the pipe's writers;
- a thread waiting on a primitive of its own process that no living thread can release (a Python one; any private
  futex of a process left with one OS thread, as fork leaves it), or for a signal alone that no handler of it would
  let go on while nothing else of the job moves -> nobody; where a signal handler of its may end the main thread's
  wait (a launcher waiting for its child's SIGCHLD, or in pause()) -> its living children; where one thread blocked in
  a read alone could (a reader thread that fills main's queue) -> that thread, and on to the read's other end (own.py);
- a thread waiting for a soft lock file that no process has open, or for a multiprocessing semaphore taken (count
  0) that every process sharing it waits for (a lock, or what its caller's frames make it: an event, a condition, a
  barrier, a queue's room or unfinished tasks, each in its own words) -> nobody;
- a thread opening a FIFO that no process has open the other way -> the rest of the job (any process could:
  ``moves`` while anything of it moves), followed only where its process waits on nothing else; so is the main
  thread of a process that is not a rank blocked on a socket with no peer (accept, an unconnected datagram socket:
  ``moves`` while another process of the job moves), drawn only where nothing else is;
- a process waiting for a DataLoader batch that no worker holds (it and every worker idle the whole window) -> nobody;
- a process waiting for a pool's result that nobody will hand over (the pool's result handler gone, a worker lost
  with its task, an executor with no worker) -> nobody.

Each node's state is a measured fact (diagnose/state.py: ``gone``, ``stopped``, ``blocked``, ``spinning``,
``working``, ``asleep``, ``idle``, ``person``, ``outside``, ``unknown``). The verdict follows each chain to its end:

- a cycle, a holder that is gone with what it held (a file lock, a semaphore), nobody, a person, or a stopped
  holder: hung, with proof;
- a holder that exited in the look, of a wait its exit ends (a child's status, a pipe's end): no verdict from it;
- a holder blocked or spinning: hung (proof when the holder's own wait is proven);
- a working holder: ``waiting``, bounded by --max-slow, with the holder's progress as proof of work;
- a holder asleep or waking: alive;
- nothing readable: no verdict (``--min-stall`` decides, as before).
"""

from __future__ import annotations

import dataclasses

from hangwatch import signatures as sg
from hangwatch.capture.roles import is_mp_helper
from hangwatch.capture.syscalls import LISTENING
from hangwatch.diagnose import proof
from hangwatch.diagnose.acts import may_signal
from hangwatch.diagnose.chains import (
    ALIVE_ENDINGS,
    ENDED_BY_EXIT,
    ENDINGS,
    MAX_HOLDERS,
    MAX_HOPS,
    NOBODY,
    OPEN_FILE_LOCKS,
    PERSON,
    SELF_HELD,
    STATE_WORDS,
    WRITTEN_BY_ANY,
    Chain,
    Edge,
    Node,
    WaitGraph,
    ending_text,
    nobody_text,
    pid_id,
    to_anyone,
    to_nobody,
)
from hangwatch.diagnose.childloop import child_loop
from hangwatch.diagnose.holding import holder_node, holder_words, notified
from hangwatch.diagnose.lost import lost_result
from hangwatch.diagnose.own import (
    blocked_throughout,
    closed_words,
    gil_wait,
    held_here_hangs,
    lost_batch,
    others_may_act,
    others_wait_on,
    released_by_thread,
    self_held,
    self_wait,
    side_read,
    signalled,
    sole_releaser,
    thread_id,
    thread_waits,
)
from hangwatch.diagnose.process import native_at_terminal, reads_from_person, waited_children, waits_for_child
from hangwatch.diagnose.ranks import rank_waits
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.served import request_waits
from hangwatch.diagnose.state import ALIVE, holder_process_state, moving
from hangwatch.diagnose.views import (
    IDLE_CPU_PERCENT,
    ProcessView,
    ThreadView,
    describe,
    duration_text,
    innermost_user,
    timer_bound,
)
from hangwatch.records.evidence import CLOSED_KINDS, POLLED, LockHolder, LockWait, Role
from hangwatch.records.incident import Proof

Held = tuple[Edge, Node | None]
ASYNCIO, RUN_ONCE = "asyncio/base_events.py", frozenset({"_run_once"})  # an event loop's turn: its poll, its timers


def _held_by_itself(
    scene: Scene, v: ProcessView, wt: ThreadView | None, w: LockWait, me: str, place: str, timed: bool | None
) -> list[Held]:
    """A wait on a pipe's or a socket's other end (or a file lock) that only the waiter's own process holds, in words:
    its main thread's, or a side thread's (an HTTP server's thread reading a connection main holds); an event loop's
    or a selector's poll is one of its files (the others are followed too)."""
    note = w.note or ""
    what = f"{w.path} {_poll_timeout(wt)}" if POLLED in note or w.kind == "epoll" else str(w.path)
    if w.kind == "timerfd" and timed is False and wt is not None and wt.last.wakes_in:
        what += f" whose timer fires in {duration_text(wt.last.wakes_in)}, past the job's bounds,"
    key = ("poll eventfd" if w.kind in WRITTEN_BY_ANY else "poll") if POLLED in note else w.kind  # (no other end)
    key = "backlog" if key == "socket" and sg.NOT_ACCEPTED in note else key
    key = "loop" if key == "poll" and wt is not None and any(sg.at(f, ASYNCIO, RUN_ONCE) for f in wt.frames) else key
    closed = closed_words(v, w.tid)
    words = SELF_HELD[key].format(what, place) + closed
    others = proof.others_waiting(v, w.tid) if me == pid_id(v.pid) and not closed else []
    if others:  # the threads of it that could end the process's wait, each blocked in the user's code: where, on what
        words += f"; its other threads wait too, {proof.waiting_words(others)}"
    if wt is not None and wt is not v.main_thread:  # (a side thread's read, or its wait as the process's)
        words = f"thread '{wt.name}' {words}".replace("only it", "only its process")
    return self_wait(scene, v, me, w, f"{v.label()} {words}", timed)


def _held_waits(scene: Scene, v: ProcessView) -> tuple[list[tuple[Edge, Node | None]], dict[int, list[Held]]]:
    """The waits the capture followed to their holders (a lock, a semaphore, a pipe's or a socket's other end), each as
    an edge and (for holders the views lack) the holder's node; a side thread's reads apart (``side_read``)."""
    out: list[tuple[Edge, Node | None]] = []
    side: dict[int, list[Held]] = {}
    # a poll ends when any of its files is ready: one with no holder found may end it, so none of its files is a wait
    unfollowed = {w.tid for w in v.ev.waits if POLLED in (w.note or "") and not (w.holders or self_held(w))}
    for w in v.ev.waits:
        wt = next((x for x in v.threads if x.tid == w.tid), None)
        me = thread_id(v.pid, w.tid) if side_read(v, wt, w) else pid_id(v.pid)
        unheld = _unheld(scene, v, wt, w)
        if unheld is not None:
            out.append(unheld)
            continue
        note = w.note or ""
        held_here = self_held(w)
        if (wt is None and v.threads) or not (w.holders or held_here) or (POLLED in note and w.tid in unfollowed):
            continue  # (a native process, sort or tar, has no thread of Python: its kernel-read wait stands alone)
        what = w.kind if w.kind in CLOSED_KINDS or w.kind in ("semaphore", "pidfd") else "file lock"
        frames = wt.frames if wt is not None else ()
        place = describe(innermost_user(frames) or (frames[0] if frames else None)) if frames else "its native code"
        # (an eventfd others hold too: the waiter's own threads could write it as well)
        if (held_here or (w.kind in WRITTEN_BY_ANY and "the waiter itself" in note)) and not held_here_hangs(
            v, w.tid, me == pid_id(v.pid)
        ):
            continue  # another thread of it, Python or native (a TCPStore server's), may take or give the bytes
        if held_here and w.kind in OPEN_FILE_LOCKS and proof.handlers_may_run(v, proof.GOES_ON):
            continue  # a handler may end the lock's wait (signal.alarm around a flock: the usual timeout)
        timed = _timed(v, wt, w)
        if w.kind in WRITTEN_BY_ANY and (len(w.holders) > MAX_HOLDERS or "searched for" in note):
            timed = True  # a holder not followed (past the first few), or not found, could write or arm it: no proof
        if held_here:  # the other end is the waiter's own: only another thread of its own could end the wait
            dest = out if me == pid_id(v.pid) else side.setdefault(w.tid, [])  # (a side read's: its thread's node)
            dest.extend(_held_by_itself(scene, v, wt, w, me, place, timed))
            continue
        # any reader of a full pipe could make room, any writer of a pipe (or holder of a socket's end) could write
        holders = w.holders[:MAX_HOLDERS] if w.kind in ENDED_BY_EXIT | WRITTEN_BY_ANY else w.holders[:1]
        for h in holders:
            if h.pid == v.pid:
                continue
            node = None if h.in_job and scene.view(h.pid) is not None else holder_node(h, timer_bound(scene.evidence))
            who = v.label() if wt is None or me == pid_id(v.pid) else f"its thread '{wt.name}'"
            words = holder_words(v, wt, w, h, who, place, what)
            if words is None:
                continue  # any of several sharers not waiting could: a wait for any of them, no proof via one
            dest = out if me == pid_id(v.pid) else side.setdefault(w.tid, [])  # (a side read's, and what follows it)
            dest.append((Edge(me, pid_id(h.pid), what, words, timeout=timed, tid=w.tid), node))
            if node is not None:
                dest.extend(_waited_children(scene, h))
    return out, side


def _waited_children(scene: Scene, h: LockHolder) -> list[tuple[Edge, Node | None]]:
    """The edges from a holder outside the job to the children it waits for with no timeout (`flock FILE cmd`, a
    shell running `(sleep 30; echo y)`), and on to theirs: each child's node (the job's own where it is one of the
    job). A wait for any of several children ends when any of them does: no proof goes through it (a sibling may end
    it first), only what keeps it alive."""
    out: list[tuple[Edge, Node | None]] = []
    bound = timer_bound(scene.evidence)
    for kid in h.waits_for:
        node = None if kid.in_job and scene.view(kid.pid) is not None else holder_node(kid, bound)
        words = f"pid {h.pid} waits for its child pid {kid.pid}"
        out.append((Edge(pid_id(h.pid), pid_id(kid.pid), "child", words, timeout=len(h.waits_for) > 1), node))
        if node is not None:
            out.extend(_waited_children(scene, kid))
    return out


def _timed(v: ProcessView, t: ThreadView | None, w: LockWait) -> bool | None:
    """Whether ``w`` can end by a timeout of its own within the job's bounds: a poll's timeout that ends past them (at
    the earliest: its request less the thread's age) is none."""
    if w.timeout is True and t is not None and t.last.wakes_in is not None and t.last.wakes_in >= v.timer_bound_s:
        return False
    return w.timeout


def _poll_timeout(t: ThreadView | None) -> str:
    """A followed poll's timeout in words: none, or one that ends past the job's bounds."""
    left = t.last.wakes_in if t is not None and t.last.timeout is not False else None
    return "with no timeout" if left is None else f"with a timeout that ends in {duration_text(left)} at the earliest"


def _unheld(scene: Scene, v: ProcessView, t: ThreadView | None, w: LockWait) -> tuple[Edge, Node] | None:
    """A wait the capture found no holder for, where that absence is the fact that decides:
    - a soft lock file that no process has open (its holder is gone; only deleting the file releases it) and a
      multiprocessing semaphore taken (count 0) that every process sharing it waits for: nobody can release it;
    - an ``open()`` of a FIFO that no process has open the other way: any process could still open it, so the
      rest of the job is what it waits on (alive while anything of the job moves)."""
    if t is None:
        return None
    frame = innermost_user(t.frames)
    at = describe(frame) if t.frames else "its native code"
    fact = None
    if w.kind == "soft" and not w.holders and "no process has it open" in (w.note or ""):
        what, fact = "file lock", f"{w.note}"
        words = f"{v.label()} waits for the soft lock {w.path} at {at}"
    elif w.kind == "semaphore" and not w.holders and w.value == 0 and w.waiters and t.blocked:
        if sg.waits_for_work(t.frames) or proof.others_may_release(v, t.tid):
            # a pool worker idle for the task queue's lock (a worker's turn), or another thread of its own process,
            # which the sharers' count (by process) does not tell from the waiter, may hold it
            return None
        kind = notified(t)  # nobody holds an event, a condition, a barrier, a queue: someone is to end the wait
        lock = f"`{w.name}`" if w.name else f"a multiprocessing {kind or 'lock'}"
        taken = "its semaphore is at count 0" if kind else f"{lock} is taken (count 0)"
        what, fact = kind or "semaphore", f"{taken} and every process that shares it waits on it"
        words = f"{v.label()} waits for {lock} ({w.path}) at {at}"
    if fact is not None:
        return to_nobody(v.pid, what, words, fact, timeout=w.timeout, tid=t.tid)
    if w.kind != "fifo_open" or w.holders or not blocked_throughout(t):
        return None
    words = f"{v.label()} waits in open() of the FIFO {w.path} at {at}; no process has it open the other way"
    could, nothing = "any process could open it", "nothing in the job moves that could open it"
    return to_anyone(v.pid, "fifo", words, could, moving(scene), nothing, w.timeout, t.tid)


def _stack_waits(scene: Scene, v: ProcessView, t: ThreadView, at: str, kernel_read: bool) -> list[Edge]:
    """What its main thread's stack says it waits on: its children (where the kernel named none,
    ``kernel_read``), its DataLoader workers' next batch, a person at the terminal."""
    me, out = pid_id(v.pid), []
    if (
        not kernel_read
        and v.role not in (Role.DATALOADER_WORKER, Role.LAUNCHER)
        and (v.cpu_percent or 0.0) <= 5.0
        and waits_for_child(v)
    ):
        for k in waited_children(scene, v):
            said = f"{v.label()} waits for its child pid {k.pid} at {at}"
            out.append(Edge(me, pid_id(k.pid), "child", said, timeout=t.last.timeout))
    if scene.waits_for_batch(v):
        # (DataLoader(timeout=N): the wait ends by itself, raising, within N s)
        bounded = any(sg.LOADER_TIMEOUT_CALL in (f.code or "") for f in t.frames if sg.at(f, sg.DATALOADER_PY)) and (
            t.last.wakes_in is None or t.last.wakes_in < v.timer_bound_s  # (one past the bounds: as if it had none)
        )
        for worker in scene.workers_of(v.pid):
            said = f"{v.label()} waits for a DataLoader batch at {at}; worker pid {worker.pid} could bring it"
            said += " (within the loader's timeout: DataLoader(timeout=...))" if bounded else ""
            out.append(Edge(me, pid_id(worker.pid), "dataloader batch", said, timeout=bounded or None))
    if (
        v.role in (Role.MAIN, Role.RANK, Role.CHILD)
        and t.has_stack
        and t.idle_throughout
        and not t.woke_often
        and reads_from_person(v, t)
    ):
        out.append(Edge(me, PERSON, "terminal", f"{v.label()} reads the terminal at {at}"))
    return out


def _edges_of(scene: Scene, v: ProcessView) -> list[tuple[Edge, Node | None]]:
    """What process ``v`` waits on, each as an edge and (for holders the views lack) the holder's node."""
    out: list[tuple[Edge, Node | None]] = [
        (e, None) for e in _kernel_child_waits(scene, v) or _loop_child_waits(scene, v)
    ]
    t = v.main_thread
    if t is None or not v.has_stacks:
        out += _held_waits(scene, v)[0]  # a native process (sort, tar): its kernel-read waits, a person's
        if not out and native_at_terminal(scene, v) is not None:
            out.append((Edge(pid_id(v.pid), PERSON, "terminal", f"{v.label()} reads the terminal"), None))
        return out or list(_peerless(scene, v))
    if served := request_waits(scene, v):  # a Manager's server: what its one running request waits on
        return out + list(served)
    at = proof.wait_place(t)
    gil = gil_wait(v, t, at)
    if gil:  # (whatever else its line waits on, it goes on only once the GIL's holder lets go of it)
        return gil
    lost = lost_result(scene, v)
    if lost is not None and lost.proves:  # the pool's result that nobody will hand over: what its main thread waits on
        said = f"{v.label()} waits for a pool's result at {describe(lost.frame)}"
        return [to_nobody(v.pid, "pool result", said, lost.fact)]
    batch = lost_batch(scene, v, t, at)
    if batch is not None:  # the batch no worker holds: what its main thread waits on
        return [batch]
    held, side = _held_waits(scene, v)  # (main's read followed to its writers: no guess of a child from its stack)
    out.extend((e, None) for e in _stack_waits(scene, v, t, at, bool(out) or any(e.tid == t.tid for e, _ in held)))
    out.extend(held)
    if blocked_throughout(t):  # (a rank blocked for the whole window in one of torch's calls)
        out.extend((e, None) for e in rank_waits(scene, v, at))
    if out:
        return out
    ends = signalled(scene, v, t, at) or thread_waits(v, scene)
    by_thread = None if ends else released_by_thread(v, t, at, side)
    return ends or by_thread or list(_peerless(scene, v))


def _loop_child_waits(scene: Scene, v: ProcessView) -> list[Edge]:
    """A main thread in a loop that only sleeps, whose test is its child's liveness (``while p.is_alive():``, ``while
    p.poll() is None:``, ``while p.exitcode is None:``), waits for that child as a ``join()`` would: the loop ends when
    the child does and does nothing else meanwhile (a parent that reads the child's result only after it exits). Only
    with one living child of its own (multiprocessing's helpers aside), and every other thread parked."""
    t, read = v.main_thread, child_loop(v)
    kids = [c for c in scene.children(v.pid) if not c.state.startswith("Z") and not is_mp_helper(c.info.cmdline)]
    if read is None or t is None or len(kids) != 1:
        return []
    at = describe(t.frames[0])
    words = f"{v.label()} waits for its child pid {kids[0].pid} at {at}, in a loop that only sleeps until it ends"
    words += f" ({read.loop})" if read.loop else ""
    return [Edge(pid_id(v.pid), pid_id(kids[0].pid), "child", words, False, tid=t.tid)]


def _kernel_child_waits(scene: Scene, v: ProcessView) -> list[Edge]:
    """A process with a thread asleep in ``wait4``/``waitid`` waits for a child, Python or not (``g++`` for its
    ``cc1plus``, a shell for its command, asyncio's child watcher thread for a subprocess): the kernel's reading
    alone, to the child the call names, else to every living child."""
    out: list[Edge] = []
    living = [c for c in scene.children(v.pid) if not c.state.startswith("Z")]
    main = v.main_thread
    waiting = main is not None and blocked_throughout(main)
    for t in v.threads:
        if not t.samples or t.last.syscall not in ("wait4", "waitid") or t.last.state != "S":
            continue
        if t.tid != v.pid and not waiting:
            continue  # a helper thread waits for a child while main works: the process does not wait on it
        kids = living
        if t.last.wait_child is not None:  # the call names its child: that one, or none the look has (just started)
            kids = [k for k in kids if k.pid == t.last.wait_child]
        at = describe(innermost_user(t.frames)) if t.frames else f"{t.last.syscall}()"
        who = v.label() if t.tid == v.pid else f"{v.label()} thread '{t.name}'"
        out.extend(
            Edge(
                pid_id(v.pid),
                pid_id(k.pid),
                "child",
                f"{who} waits for its child pid {k.pid} at {at}",
                t.last.timeout,
                tid=t.tid,
            )
            for k in kids
            if not any(e.holder == pid_id(k.pid) for e in out)
        )
    return out


# The end of a socket's words when it has no peer: a listening one (in accept()), an unconnected datagram one
NO_PEER = (" -> 0.0.0.0:0", " -> :::0", LISTENING)


def _peerless(scene: Scene, v: ProcessView) -> list[tuple[Edge, Node]]:
    """The main thread blocked on a socket with no peer (a listener's ``accept()``, an unconnected datagram socket's
    receive): any process may end its wait (connect, send), as of a FIFO's open, so the rest of the job is what it
    waits on: moving (alive) while any other process of the job moves (a thread of its own, a heartbeat, does not
    connect to it), else blocked (never proof: a process outside the job may still; hung only by --min-stall).
    Another thread's accept is a server's idle state (multiprocessing's resource sharer in every DataLoader worker
    that passed a file descriptor, a metrics endpoint), not what its process waits on; a rank's or a launcher's is
    the rank graph's to judge (its peers, waiting on it, would count as moving)."""
    t = v.main_thread
    target = (t.last.fd_target or "") if t is not None else ""
    if t is None or v.role in (Role.RANK, Role.LAUNCHER) or not target.endswith(NO_PEER) or not blocked_throughout(t):
        return []
    socket = target.split(" -> ")[0].removesuffix(LISTENING)
    at = describe(innermost_user(t.frames)) if t.frames else "its native code"
    words = f"{v.label()} waits on {socket}, a socket with no peer, at {at}"
    could, nothing = "any process could connect or send", "nothing else in the job moves that could connect or send"
    return [to_anyone(v.pid, "socket", words, could, moving(scene, besides=v.pid), nothing, t.last.timeout, t.tid)]


PARKED_ON = {"futex": "on a lock or event of its own", "pause": "in pause()"}


def _parked_on(v: ProcessView) -> str:
    """What the threads of a parked process (``proof.sealed_but``: each in a private futex or in pause()) wait on."""
    return " or ".join(dict.fromkeys(PARKED_ON.get(o.last.syscall or "", "blocked") for o in v.threads))


def build_graph(scene: Scene) -> WaitGraph:
    """The wait-for graph of one look, with each waiting process's chain followed to its end."""
    nodes: dict[str, Node] = {}
    for v in scene.views:
        m = holder_process_state(v)
        parked = (
            m.state == "blocked"
            and bool(v.threads)
            and not proof.handler_may_end(v)  # a signal handler of its may still set what it waits for
            and proof.sealed_but(v, frozenset())  # every thread parked
        )
        # a process a signal ends (parked, in pause(), asleep past the bounds, looping) that the job may signal, or
        # whose own timeout's handler may end its sleep
        sender = may_signal(scene, v) if m.state in ("looping", "long_sleep") or parked else None
        sender = sender or (proof.alarmed(v) if m.state == "long_sleep" else None)
        main = v.main_thread
        single = (
            main is not None
            and (blocked_throughout(main) or m.state == "blocked")  # (a loop that waits on its child)
            and not others_may_act(v, main.tid)
            and (v.cpu_percent or 0.0)
            <= IDLE_CPU_PERCENT  # (a process at CPU runs something, whatever its threads say)
        )
        nodes[pid_id(v.pid)] = Node(
            pid_id(v.pid),
            v.label(),
            m.state,
            m.fact
            + (f"; every thread of it waits {_parked_on(v)} with no timeout, none woke" if parked else "")
            + (f"; {sender}" if sender else ""),
            proves_work=m.proves_work,
            # the graph proves by a node's loop with no way out, its long timer, or a spin its locals prove where no
            # other thread of it could end the spin (a cycle is only of nodes blocked: a spinning one ends a chain)
            proves_hang=(parked and not sender)
            or (m.proves_hang and m.state in ("looping", "long_sleep") and not sender)
            or (
                m.proves_hang and m.state == "spinning" and not proof.others_may_release(v, main.tid if main else None)
            ),
            single_minded=single,
            measured=main is not None and main.measured,
        )
    nodes[PERSON] = Node(PERSON, "a person at the terminal", "person", "nobody is known to be typing")
    out_edges: dict[str, list[Edge]] = {}
    edges: list[Edge] = []
    for v in scene.views:
        alarm = proof.alarmed(v)  # (a timeout's handler may raise out of any wait of its main thread)
        for drawn, holder in _edges_of(scene, v):
            if holder is not None and holder.id not in nodes:
                nodes[holder.id] = holder
            if drawn.holder not in nodes:
                continue
            timed = alarm and drawn.timeout is not True and drawn.tid in (None, v.pid)
            edge = dataclasses.replace(drawn, timeout=True, words=f"{drawn.words} ({alarm})") if timed else drawn
            edges.append(edge)
            out_edges.setdefault(edge.waiter, []).append(edge)
    for v in scene.views:  # main's wait that one thread alone could end, by one edge (a wait4(-1) for any of several
        o, mine = sole_releaser(v), out_edges.get(pid_id(v.pid), [])  # children ends with any one's exit), at no CPU
        ends = o is not None and len(mine) == 1 and (mine[0].tid == o.tid or mine[0].holder == thread_id(v.pid, o.tid))
        if ends and (v.cpu_percent or 0.0) <= IDLE_CPU_PERCENT:
            nodes[pid_id(v.pid)] = dataclasses.replace(nodes[pid_id(v.pid)], single_minded=True)
    for v in scene.views:  # a loop through a process is closed where each thread of it that could act waits on it
        n = nodes[pid_id(v.pid)]
        if not n.single_minded and (needs := others_wait_on(v, n, edges)) is not None:
            nodes[n.id] = dataclasses.replace(n, needs=needs)
    chains = tuple(c for v in scene.views if (c := _follow(pid_id(v.pid), nodes, out_edges)) is not None)
    used = {e.waiter for e in edges} | {e.holder for e in edges}
    return WaitGraph(tuple(n for n in nodes.values() if n.id in used), tuple(edges), chains)


# What a process holds or sends, which any thread of it may write, read, release or send (not a child's exit)
HELD = CLOSED_KINDS | {"semaphore", "file lock", "filelock", "signal"}


def _order(states: str) -> tuple[str, ...]:
    return tuple(states.split())


# Which of several holders a chain follows: the one that decides the wait soonest (a working holder
# beats a blocked one: a batch can come from any worker; a child that works ends the wait).
_PREFER = _order(
    "working traced spin_waits wakes moves asleep unknown brief idle spinning looping long_sleep blocked stopped "
    "person nobody gone"
)
# A DataLoader hands its batches back in order: the batch the main process waits for is held by the worker
# that has not returned its own (stuck first); an idle worker holds none.
_PREFER_BATCH = _order(
    "gone stopped traced blocked looping long_sleep spinning spin_waits working wakes asleep unknown brief idle"
)
# A collective completes only when every rank has entered it: the chain follows the rank that holds it longest.
_PREFER_ALL = _order(
    "gone stopped traced person nobody long_sleep looping blocked spinning idle unknown brief asleep spin_waits "
    "wakes working"
)


def _soonest(
    edge: Edge,
    nodes: dict[str, Node],
    out_edges: dict[str, list[Edge]],
    ahead: dict[str, Chain | None],
    path: frozenset[str],
) -> float:
    """How soon ``edge``'s holder may end the wait, among several that each could (``_rank``): a holder that waits
    itself is as soon as its own chain's end where that is alive (a shell blocked in wait4 for a `sleep 8` that then
    signals its parent ends a pause() sooner than a sibling asleep for a day). A chain that runs back into ``path``, the
    waits being followed now, is no way out of them: that holder is alive only by a wait it would end itself (a server
    reading a queue main and a producer both hold, main waiting on the server: the producer decides, not main)."""
    at = _rank(edge, nodes)
    order = _PREFER if edge.resource not in ("dataloader batch", "collective") else ()
    if not order or edge.holder not in out_edges or edge.holder.startswith("job:") or edge.holder in path:
        return at
    if edge.holder not in ahead:
        ahead[edge.holder] = _follow(edge.holder, nodes, out_edges, ahead, path)
    own = ahead[edge.holder]
    if own is None or own.ending not in ALIVE_ENDINGS or any(h.holder in path for h in own.hops):
        return at
    return min(at, order.index(own.ending) if own.ending in order else order.index("asleep"))


def _rank(edge: Edge, nodes: dict[str, Node]) -> float:
    if edge.holder.startswith("job:"):  # any process could open the FIFO, connect or send to the socket: it stands
        return len(_PREFER) + 1  # for its process only where nothing else does
    order = {"dataloader batch": _PREFER_BATCH, "collective": _PREFER_ALL}.get(edge.resource, _PREFER)
    node = nodes[edge.holder]
    at = order.index(node.state) if node.state in order else len(order)
    if edge.resource == "dataloader batch" and node.proves_hang and node.state != "gone":
        # a worker proven stuck next after one gone (main gets that exit): batches come back in order, so the job
        # waits for its batch, now or after the ones before it (an idle worker read without its Python stack,
        # "blocked", came first and hid a spin)
        return 0.5
    return at


def _follow(
    start: str,
    nodes: dict[str, Node],
    out_edges: dict[str, list[Edge]],
    ahead: dict[str, Chain | None] | None = None,
    path: frozenset[str] = frozenset(),
) -> Chain | None:
    """The chain from ``start``, each hop the holder that ends its wait soonest (``_soonest``); ``path``: the waits
    being followed already, further up (a holder is ranked from there)."""
    if start not in out_edges:
        return None
    ahead = {} if ahead is None else ahead
    ahead.setdefault(start, None)  # (being followed: a holder on the way is ranked by its own state)
    hops: list[Edge] = []
    seen = {start}
    cur = start
    for _ in range(MAX_HOPS):
        options = out_edges.get(cur)
        if not options:
            break
        # a wait on itself decides only when it is the process's only one (a poll's other files may still end it)
        options = [e for e in options if e.holder != cur] or options
        here = path | seen
        edge = min(options, key=lambda e: _soonest(e, nodes, out_edges, ahead, here) if len(options) > 1 else 0.0)
        hops.append(edge)
        if edge.holder in seen:
            loop = hops[next(i for i, h in enumerate(hops) if h.waiter == edge.holder) :]
            on = {h.waiter for h in loop}
            if all(_closed(nodes[h.waiter], on) for h in loop):
                return _chain(hops, nodes[edge.holder], "cycle")  # (one measured at work: a thread of it may move)
            # what a process holds (a pipe's or a socket's end, a lock) where a thread of it is alive: it may act; else
            # a member of the loop that is alive itself (a child fed bytes as it reads): its wait may end, and the loop
            alive = next((nodes[h.holder] for h in loop if h.resource in HELD and nodes[h.holder].state in ALIVE), None)
            alive = alive or next((nodes[h.holder] for h in loop if nodes[h.holder].state in ALIVE), None)
            return _chain(hops, *((alive, alive.state) if alive else (nodes[edge.holder], "blocked")))
        seen.add(edge.holder)
        cur = edge.holder
    end = nodes[cur]
    if end.state == "gone" and hops and hops[-1].resource in ENDED_BY_EXIT:
        return _chain(hops, end, "ended")
    return _chain(hops, end, end.state if end.state in ENDINGS else "unknown")


def _closed(n: Node, loop: set[str]) -> bool:
    return n.state not in ALIVE and (n.single_minded or (n.needs is not None and n.needs <= loop))


def _chain(hops: list[Edge], end: Node, ending: str) -> Chain:
    verdict, proven = ENDINGS[ending]
    proven = proven or (ending in ("blocked", "looping", "spinning") and end.proves_hang)
    proven = end.proves_hang if ending == "long_sleep" else proven  # (not where the job may signal it: may_signal)
    if any(h.timeout is True for h in hops):
        proven = False  # a wait that times out ends by itself: the chain says where it waits, not that it hangs
    fact: Proof | None = None
    if proven:
        fact = proof.hang(
            f"{hops[0].words}, and {' -> '.join(h.words for h in hops[1:]) + '; ' if hops[1:] else ''}"
            + (
                f"{nobody_text(hops[-1].resource, end)} ({end.fact})"
                if end.state == NOBODY
                else f"{end.label} is {STATE_WORDS.get(end.state, end.state)} ({end.fact})"
            )
            + f": {ending_text(ending, hops, end=end)}"
        )
    elif ending == "working" and end.proves_work:
        fact = proof.work(f"{hops[0].words}; {end.label} works: {end.fact}")
    return Chain(tuple(hops), end, ending, verdict, fact)
