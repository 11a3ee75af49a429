"""Causes in the user's own code: a busy loop, a deadlock between threads."""

from __future__ import annotations

from dataclasses import replace

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose import proof, timers
from hangwatch.diagnose.loops import LoopMotion, one_long_call
from hangwatch.diagnose.output import buffered_stdout
from hangwatch.diagnose.raised import Raised, thread_deaths
from hangwatch.diagnose.scene import Hit, Scene, named, named_at
from hangwatch.diagnose.state import ALIVE, Measured, retries, running_state, thread_state
from hangwatch.diagnose.views import ProcessView, ThreadView, describe, described, duration_text
from hangwatch.fixes import (
    BUFFERED_FIX,
    BUSY_FIX,
    COMPUTING_FIX,
    DEADLOCK_FIX,
    EXIT_JOIN_FIX,
    FUTURE_IN_POOL_FIX,
    IMPORT_LOCK_FIX,
    LOCK_KEPT_FIX,
    LOOP_BLOCKED_FIX,
    LOOP_LOCK_FIX,
    OTHERS_WAIT_FIX,
    REENTERED_LOCK_FIX,
    SPIN_WAIT_FIX,
    WAIT_FOREVER_FIX,
)
from hangwatch.records.evidence import Frame, LocalsRead, Role
from hangwatch.records.incident import Finding


def _spin(v: ProcessView, t: ThreadView, m: Measured) -> Hit:
    """A thread that spins in the same frame with locals read, named at its loop's header (the samples land on any
    line of its body; the verdict stage proves the spin where its locals show it gets nowhere)."""
    motion = m.motion
    assert motion is not None  # noqa: S101 - the rule judges a loop without locals elsewhere
    frame = _at_loop(t.user_frame, v.locals_of(t.tid))
    said = (
        f"{v.label()} spins at {m.fact}."
        if m.state == "spin_waits"
        else f"{v.label()} spins at {v.cpu_text()} in {describe(frame)}: the same code runs over "
        f"and over for {v.duration_s:.0f} s without getting anywhere."
    )
    facts = (
        f"thread '{t.name}' (tid {t.tid}) at {t.cpu_percent or 0:.0f}% CPU, running Python and holding the GIL "
        + _gil_held(t),
        f"the same innermost function in all {len(t.stacks)} samples, last at {described(t.user_frame)}",
        f"locals of {describe(t.user_frame)}: {motion.evidence}",
    )
    finding = Finding(
        Cause.CODE_BUSY_LOOP,
        0.8,
        said,
        v.where(t, frame),
        facts,
        SPIN_WAIT_FIX if m.state == "spin_waits" else BUSY_FIX,
    )
    return named(finding)


def _gil_held(t: ThreadView) -> str:
    """In how many samples the thread held the GIL (a spin holds it in at least half: ``ThreadView.spinning``)."""
    held = sum(1 for s in t.samples if s.owns_gil)
    return "in every sample" if held == len(t.samples) else f"in {held} of {len(t.samples)} samples"


def busy_loop_rule(scene: Scene) -> list[Hit]:
    """code.busy_loop: a process spinning at high CPU in the same user frames."""
    hits = []
    workers_handled = {w.pid for m, _ in scene.loader_waiters() for w in scene.workers_of(m.pid)}
    for v in scene.views:
        if v.pid in workers_handled:
            continue  # the DataLoader rule explains a spinning worker, with its main process
        if v.stdout_grew:
            continue  # it is writing output: a compute loop making progress, not a spin
        for t in v.threads:
            if not t.spinning:
                continue
            m = running_state(v, t)
            motion = m.motion
            if motion is not None and motion.advanced:
                hits.append(_advancing_loop(v, t, motion))
                continue
            if m.state == "working" and one_long_call(t):  # (its loop's locals, where read, stayed: no advance)
                hits.append(_long_call(v, t, motion))
                continue
            if motion is None:  # no locals to read (module-level code, C frames): whether it advances is unknown
                hits.append(_unjudged_loop(v, t))
                continue
            hits.append(_spin(v, t, m))
    return hits


def _at_loop(frame: Frame | None, reads: tuple[LocalsRead, ...]) -> Frame | None:
    """A spin is named at its loop's header (the samples land on any line of its body)."""
    last = reads[-1] if reads else None
    if (
        frame is None
        or last is None
        or last.loop_line is None
        or (last.file, last.function) != (frame.file, frame.function)
    ):
        return frame
    return replace(frame, line=last.loop_line, code=last.loop)


def _unjudged_loop(v: ProcessView, t: ThreadView) -> Hit:
    """Busy in the same code, with no locals to tell a spin from work (a loop at a module's top level has
    none that py-spy can read): alive, never hung on sight. A loop whose stack moves between lines at high
    CPU works (the same fact that makes a rank a working straggler): only --max-slow bounds it, never the
    step history. One that sits on the very same line in every sample shows nothing more than a spin does,
    so the job's own history bounds it."""
    frame = t.user_frame
    lines = v.lines_of(t)
    moving = v.stack_moved(t)
    where_text = f"lines {', '.join(str(n) for n in lines[:4])}" if len(lines) > 1 else "the same line"
    place = f"{frame.function} ({frame.file.rsplit('/', 1)[-1]})" if frame is not None else "no Python frame"
    reads = len(v.locals_of(t.tid))
    # a function whose locals were read twice or more, empty (its loop reads a global, another object), is no
    # module's top level: say which
    mine = [r for r in v.locals_of(t.tid) if frame is not None and (r.file, r.function) == (frame.file, frame.function)]
    top = frame is None or frame.function == "<module>" or not reads
    moved = sorted({n for n, x in mine[-1].values if x != dict(mine[0].values).get(n, x)}) if len(mine) >= 2 else []
    unread = (
        "no locals were read for this frame (code at a module's top level has none to read)"
        if top
        else f"its locals were read {len(mine)} times and hold nothing (the loop reads a global or another object)"
        if len(mine) >= 2 and not any(r.values for r in mine)
        else f"its locals were read {len(mine)} times and {', '.join(f'`{n}`' for n in moved[:4])} changed: what "
        "changed was not read as its loop's progress, nor as a spin"
        if moved
        else "too few reads of this frame's locals to compare"
    )
    if moving:
        summary = (
            f"{v.label()} runs a loop in {place} at {v.cpu_text()}, its stack moving between "
            f"{where_text}; "
            + (
                "its locals cannot be read (a module's top level has none)"
                if top
                else "its locals hold nothing it reads"
            )
            + ", so whether it gets anywhere is not known, but it works: alive, bounded by --max-slow, not by the step "
            "history."
        )
    else:
        summary = (
            f"{v.label()} runs the same code at {v.cpu_text()} in {describe(frame)} for {v.duration_s:.0f} s; "
            f"{'its locals cannot be read' if top else 'its locals tell nothing of its loop'}, so whether "
            "the loop gets anywhere is unknown: alive, judged against this job's own history."
        )
    facts = (
        f"thread '{t.name}' (tid {t.tid}) at {t.cpu_percent or 0:.0f}% CPU, running Python and holding the "
        f"GIL {_gil_held(t)}",
        f"innermost frame in {place} in all {len(t.stacks)} samples and {reads} more reads, "
        f"on {where_text}" + (f" (`{frame.code}`)" if frame and frame.code and not moving else ""),
        unread,
    )
    return named_at(
        v,
        t,
        frame,
        Cause.CODE_BUSY_LOOP,
        0.5,
        summary,
        facts,
        (
            *BUSY_FIX,
            "Move the loop into a function: its locals can then be read, and a loop that walks its "
            "data is told from a spin.",
        ),
    )


def _long_call(v: ProcessView, t: ThreadView, motion: LoopMotion | None) -> Hit:
    """One long call (alive: the state module proves it works). It gets more time (up to --max-slow). Inside a loop
    whose locals were read, they stayed (one call per turn): said as read, never as a loop that advances."""
    frame = t.user_frame
    stayed = (f"locals of {describe(frame)}: {motion.evidence}",) if motion is not None else ()
    said = (
        f"{v.label()} has been inside one call at {describe(frame)} for {v.duration_s:.0f} s, holding the "
        f"GIL at {v.cpu_text()}: a long call that runs in C (a sort, a regex, a tokenizer), alive."
    )
    facts = (
        f"thread '{t.name}' (tid {t.tid}) at {t.cpu_percent or 0:.0f}% CPU with the same stack, on the same "
        f"line, in all {len(t.stacks)} samples" + (f": `{frame.code}`" if frame and frame.code else ""),
        "a Python loop that spins lands on its loop's header or moves between lines; this stack did not",
        *stayed,
    )
    return named_at(
        v,
        t,
        frame,
        Cause.CODE_COMPUTING,
        0.65,
        said,
        facts,
        (
            *COMPUTING_FIX[1:],
            "If the call should not take this long, look at its input (a regex on a huge "
            "string backtracks for ever; a sort of millions of Python objects takes minutes).",
        ),
    )


def _advancing_loop(v: ProcessView, t: ThreadView, motion: LoopMotion) -> Hit:
    """A spinning thread whose loop variables advance: it computes. If its output is block-buffered
    into a file, that is why the log looks frozen."""
    frame = t.user_frame
    ev: tuple[str, ...] = (
        f"thread '{t.name}' (tid {t.tid}) at {t.cpu_percent or 0:.0f}% CPU in {describe(frame)}",
        f"its loop advances: {motion.evidence}",
    )
    if not buffered_stdout(v):
        said = f"{v.label()} is computing in {describe(frame)}: a CPU-bound loop whose variables advance."
        return named(Finding(Cause.CODE_COMPUTING, 0.7, said, v.where(t, frame), ev, COMPUTING_FIX))
    unset = "PYTHONUNBUFFERED unset and no -u flag"
    ev = (f"stdout is a file ({v.info.stdout}) that did not grow in {v.duration_s:.0f} s; {unset}", *ev)
    said = f"{v.label()} is computing (its loop advances) but its output is block-buffered into {v.info.stdout}"
    return named(
        Finding(Cause.OUTPUT_BUFFERED, 0.8, f"{said}, so the log looks frozen.", v.where(t, frame), ev, BUFFERED_FIX)
    )


def deadlock_rule(scene: Scene) -> list[Hit]:
    """code.deadlock: threads waiting on locks, events or queues that nothing will release."""
    hits = []
    for v in scene.views:
        if v.role == Role.DATALOADER_WORKER or not v.has_stacks or (v.cpu_percent or 0.0) > 5.0:
            continue
        main = v.main_thread
        if main is None:
            continue
        waits = {t.tid: proof.sync_wait(t) for t in v.threads if t.has_stack and t.whole}
        if waits.get(main.tid) is None:
            continue
        retried = {t.tid for t in v.threads if waits.get(t.tid) and retries(v, t) is not None}
        if any(t.woke_often for t in v.threads if waits.get(t.tid) and t.tid not in retried):
            continue  # a waiter that wakes again and again polls with a timeout: not stuck in one wait (but one that
            # only retries that wait, its loop's one way out: it waits as if it had no timeout, ``state.retries``)
        blocked = [t for t in v.threads if waits.get(t.tid)]
        lockers = [t for t in blocked if waits[t.tid] == "lock"]
        others_alive = [t for t in v.user_threads if t not in blocked]
        timed = [t for t in blocked if t is not main and t.last.timeout is True and not t.waits_forever]
        if others_alive or any(t.tid not in retried for t in timed):
            continue  # another thread runs, or its wait times out within the bounds (a Timer's): it may still act
        if not proof.user_owned(main) and any(
            not (t.parked and t.last.syscall in proof.PARKING_CALLS) for t in v.threads if t not in blocked
        ):
            continue  # main waits on a library's own primitive (Pool's result, a future): its threads release it,
            # a thread polling a pipe too (a ProcessPoolExecutor's manager, woken by a worker's result)
        # Main waits on a future or event whose work sits with a thread that itself waits on a future: the
        # end of the chain is that thread's wait (a pool worker waiting on work queued behind itself).
        deeper = next((t for t in blocked if t.tid != main.tid and proof.waits_on_future(t) and t.user_frame), None)
        # Main joins threads that wait themselves: the join ends when their waits do, so theirs is the place.
        joined = (
            next(
                (t for t in blocked if t.tid != main.tid and waits[t.tid] not in ("join", None) and t.user_frame), None
            )
            if waits[main.tid] == "join" and not lockers
            else None
        )
        cycle = _lock_cycle(lockers)
        conf, what, fix = _deadlock_words(main, blocked, lockers, waits, deeper, joined, cycle)
        if proof.handler_may_end(v) and not lockers and deeper is None and joined is None:
            what += " (but a signal handler of its own, run on the main thread, may" + (
                f": {proof.TIMER_WORDS})" if proof.caught(v, proof.SIGALRM) else ")"
            )
        # "deadlocked" only where the frames show it: a cycle of locks, or a lock its own thread holds further down
        # its stack; else what was measured, every thread blocked (the verdict stage proves it, or not)
        shown = cycle is not None or (len(lockers) == 1 and proof.reentered(lockers[0]) is not None)
        every = len(blocked) == len(v.threads)  # else the rest are library machinery or native threads, not read
        said = "is deadlocked" if shown else f"waits with every thread{'' if every else ' of its own code'} blocked"
        died = None if shown else _ended_on_an_exception(v)
        if died is not None:  # what may have kept the release from running: a thread that raised and ended
            what += f". The job's output shows thread '{died[0]}' ended on an exception: it {died[1].text()}"
            fix = (
                f"Thread '{died[0]}' ended on {died[1].text()[len('raised ') :]}: handle that error there, "
                "and on every path out of the thread release, set or mark done what others wait for ("
                + ("`with lock:`, " if lockers else "")
                + "try/finally).",
                *fix,
            )
        culprit = next((t for t in lockers if t.tid == main.tid), lockers[0] if lockers else deeper or joined or main)
        frame = culprit.user_frame
        some = (
            "every thread" if every else f"{len(blocked)} of its {len(v.threads)} threads (the rest: library or native)"
        )
        ev = [f"{v.label()} at {v.cpu_text()}; {some} blocked for {v.duration_s:.0f} s"]
        for t in blocked[:4]:  # (a library's own thread, a QueueListener's: its first frame past threading and queue)
            f = t.user_frame or next((x for x in t.frames if not x.file.endswith(proof.SYNC_MODULES)), None)
            code = f" `{f.code}`" if f and f.code else ""
            kind = waits[t.tid] or "lock"
            ev.append(f"thread '{t.name}' waits on {proof.article(kind)} {kind} at {describe(f)}{code}")
            ev += [f"thread '{t.name}' retries `{retries(v, t)}`, its loop's only way out"] if t.tid in retried else []
        if died is not None:
            ev.append(f"the job's output: thread '{died[0]}' {died[1].text()}, and is no longer among its threads")
        hits.append(named_at(v, culprit, frame, Cause.CODE_DEADLOCK, conf, f"{v.label()} {said}: {what}.", ev, fix))
    return hits


def _ended_on_an_exception(v: ProcessView) -> tuple[str, Raised] | None:
    """The last thread the job's output shows ended by an exception (Python printed it), where no thread of ``v`` now
    bears its name: it is gone, and what it was to release, set or mark done, nothing of it will."""
    names = {t.name for t in v.threads}
    gone = [d for d in thread_deaths(v.ev.output_tail or "") if d[0] not in names and d[1].frame is not None]
    return gone[-1] if gone else None


def _lock_words(
    main: ThreadView, lockers: list[ThreadView], waits: dict[int, str | None], cycle: str | None
) -> tuple[float, str, tuple[str, ...]]:
    """The deadlock's words where threads wait for locks: a cycle, locks nobody releases, a join of a thread
    that waits for one, or a lock its own thread holds further down its stack."""
    if len(lockers) >= 2 and cycle:
        return 0.9, f"{len(lockers)} threads each wait for a lock another of them holds ({cycle})", DEADLOCK_FIX
    if len(lockers) >= 2:
        said = f"{len(lockers)} threads wait for locks, and no running thread will release them"
        return 0.85, f"{said}: {proof.waiting_words(lockers)}", DEADLOCK_FIX
    if waits[main.tid] == "join":
        return 0.85, "the main thread joins a thread that waits for a lock nobody releases", DEADLOCK_FIX
    t = lockers[0]
    again = proof.reentered(t)
    loop = event_loop_under(t) if again is None else None
    if loop is not None:  # a task of the loop's may hold it, suspended at an await: the blocked loop never resumes it
        return (
            0.75,
            f"thread '{t.name}' waits for a threading lock at {describe(t.user_frame)}, inside the asyncio event loop "
            f"it runs ({describe(loop)}), and no other running thread will release it: while it waits, the loop runs "
            "no task, so a task that took the lock and awaits would never release it",
            LOOP_LOCK_FIX,
        )
    if again is None:
        at = f" at {describe(t.user_frame)}" if t.user_frame is not None else ""
        said = f"thread '{t.name}' waits for a lock{at} that no running thread will release"
        return 0.75, said, LOCK_KEPT_FIX + DEADLOCK_FIX[1:]
    name = proof.lock_expr(t.user_frame.code if t.user_frame else None)
    what = (
        f"thread '{t.name}' waits for {name} at {describe(t.user_frame)}, which it holds itself: "
        f"{describe(again)}, further down its own stack, took it and has not let it go; a lock that is not "
        "re-entrant, taken twice by one thread, never comes free"
    )
    return 0.85, what, REENTERED_LOCK_FIX


def _deadlock_words(
    main: ThreadView,
    blocked: list[ThreadView],
    lockers: list[ThreadView],
    waits: dict[int, str | None],
    deeper: ThreadView | None,
    joined: ThreadView | None,
    cycle: str | None,
) -> tuple[float, str, tuple[str, ...]]:
    """How sure, what the deadlock is in words (only what the threads' frames show), and its fix."""
    if lockers:
        return _lock_words(main, lockers, waits, cycle)
    if deeper is not None:
        return (
            0.85,
            f"thread '{deeper.name}' waits for a future at {describe(deeper.user_frame)}, while every thread of the "
            "process waits too: the task it waits for can run only on a thread that is itself waiting (a pool task "
            "that waits on a task of its own pool)",
            FUTURE_IN_POOL_FIX,
        )
    if joined is not None:  # (others wait too: alive, the one to end the joined thread's wait may be among them)
        kind, ring = (
            waits[joined.tid] or "event",
            [t for t in blocked if t.tid != main.tid and t.user_frame is not None],
        )
        if len(ring) > 1:
            said = f"its other threads each wait, none of them running: {proof.waiting_words(ring)}"
            return 0.8, f"the main thread waits in a join, and {said}", OTHERS_WAIT_FIX
        said = f"{proof.article(kind)} {kind} at {describe(joined.user_frame)} that no running thread will "
        at = f"; main joins it at {describe(main.user_frame)}" if main.user_frame is not None else ""  # (`with`'s exit)
        return (
            0.8,
            f"the main thread joins a thread that waits on {said}{RELEASED_BY.get(kind, 'set')}{at}",
            IMPORT_LOCK_FIX if kind == proof.IMPORT_LOCK else WAIT_FOREVER_FIX,
        )
    kind = "future" if proof.waits_on_future(main) else waits[main.tid] or "event"
    what = f"the main thread waits on {proof.article(kind)} {kind} that no running thread will "
    what += RELEASED_BY.get(kind, "set")
    loop = event_loop_under(main) if proof.waits_on_future(main) else None
    others = [t for t in blocked if t.tid != main.tid and t.user_frame is not None]
    if loop is None and others and not (kind == "future" and len(others) == 1):  # (one: the engine's _thread_end)
        what += ": its other threads wait too, " + proof.waiting_words(others)
        return 0.6, what, OTHERS_WAIT_FIX
    if loop is None:
        return 0.6, what + (f", at {describe(main.user_frame)}" if main.user_frame else ""), WAIT_FOREVER_FIX
    what += (
        f" at {describe(main.user_frame)}, inside the asyncio event loop it runs ({describe(loop)}): "
        "the loop cannot run the coroutine or callback that would set it while its own thread waits"
    )
    return 0.6, what, LOOP_BLOCKED_FIX


def event_loop_under(t: ThreadView) -> Frame | None:
    """The asyncio event loop's frame (``run_forever``) below a thread's wait, where its stack shows the wait inside a
    callback or a task's step the loop runs (``Handle._run``): the loop runs nothing else until it ends. None for a
    loop idle in its own poll, or no loop. (The words say the loop would set what it waits for only of a
    concurrent future's wait: ``run_coroutine_threadsafe`` on the loop's own thread.)"""
    if not any(sg.at(f, "asyncio/events.py", frozenset({"_run"})) for f in t.frames):
        return None
    return next((f for f in t.frames if sg.at(f, "asyncio/base_events.py", frozenset({"run_forever"}))), None)


# What ends a wait on each kind of primitive, in words ("no running thread will ...").
RELEASED_BY = {
    "event": "set",
    "condition": "notify",
    "future": "complete",
    "queue": "put to or take from",
    proof.QUEUE_TASKS: "mark done (task_done)",
    "semaphore": "release",
    "barrier": "reach (a party that never arrives)",
    "join": "end",
    proof.IMPORT_LOCK: "release (the thread importing that module holds it until the module's top level ends)",
}


def _lock_cycle(lockers: list[ThreadView]) -> str | None:
    """The lock cycle the frames show, in words (``'A' waits for a, held by 'B'; ...``), or None: each thread's
    waited lock (the name on its blocking line) is held by another of them (a ``with`` block or an ``acquire()``
    around a line of the other's stack). Without that, two threads waiting on locks are not said to hold each
    other's (one may wait on a lock its own frames hold: a re-entered lock)."""
    if len(lockers) < 2:
        return None
    waited = {t.tid: proof.lock_expr(t.user_frame.code if t.user_frame else None) for t in lockers}
    held = {t.tid: {h.rstrip("()") for f in t.frames for h in f.holds} for t in lockers}
    hops = []
    for t in lockers:
        name = waited[t.tid]
        other = next((o for o in lockers if o.tid != t.tid and name and name in held[o.tid]), None)
        if other is None:
            return None
        hops.append(f"'{t.name}' waits for {name}, held by '{other.name}'")
    return "; ".join(hops)


def _a_timer(t: ThreadView) -> bool:
    """The thread is a ``threading.Timer`` waiting to fire."""
    return any(proof.timer_run(f) for f in t.frames)


def _a_daemon(v: ProcessView, t: ThreadView) -> bool:
    """The thread is one the user's files start only as a daemon (read at capture): by its name, or as
    ``Thread-3 (serve)`` running ``serve`` of the file that starts it so (``(serve)@/path/job.py``)."""
    for d in v.ev.daemons:
        name, _, file = d.partition(")@") if d.startswith("(") else (d, "", "")
        if not file and t.name == d:
            return True
        fn = name[1:]
        if file and t.name.endswith(f" ({fn})") and any(f.file == file and sg.method(f) == fn for f in t.frames):
            return True
    return False


def exit_wait_rule(scene: Scene) -> list[Hit]:
    """code.deadlock at exit: the program's main code has ended (the interpreter is in ``threading._shutdown``,
    joining its non-daemon threads) and waits for a thread it joins: a monitor polling for a stop event nobody will
    set, an uploader waiting forever. Named at the first joined thread the state module does not read as alive; the
    verdict stage judges it from that thread's state and its wait's chain (a wait no living thread can end, a loop
    whose only way out nobody can take: proven)."""
    hits = []
    for v in scene.views:
        main = v.main_thread
        if main is None or not proof.exit_join(main) or main.spinning:
            continue
        # the user's threads; where there is none, its timers (a threading.Timer runs no file of the user's until it
        # fires, so a Timer is weighed only where no thread of the user's could be the one the exit waits for); none
        # that the user's files start only as daemons (``_a_daemon``): the exit never waits for those
        rest = [t for t in v.threads if t.tid != v.pid and not _a_daemon(v, t)]
        joined = (
            [t for t in v.user_threads if not _a_daemon(v, t)]
            or [t for t in rest if _a_timer(t)]
            # else a thread that runs a library's loop alone (socketserver's serve_forever started as a target: a poll
            # with a timeout); one in a wait with none (a multiprocessing Event's wait as a target) is the graph's
            or [t for t in rest if t.has_stack and t.last.timeout is True and not proof.machinery(t)]
        )
        waiting = [t for t in joined if not t.spinning and (t.blocked or t.parked or t.woke_often or t.idle_throughout)]
        if not waiting or len(waiting) != len(joined):
            continue
        # The state module reads each joined thread. Which of them are daemons is not read: where one is alive, the
        # exit may wait for that one alone (a daemon consumer blocked on its queue for ever beside an uploader that
        # ends), so the exit waits for it; where none is, for the first that is not (one of them is no daemon).
        states = {x.tid: thread_state(v, x) for x in waiting}
        now = {x.tid for x in v.ev.samples[-1].threads}  # a thread gone from the newest sample is waited for no more
        live = [x for x in waiting if x.tid in now and states[x.tid].state != "ended"]
        t = next((x for x in live if states[x.tid].state in ALIVE), None) if len(live) > 1 else None
        t = t or next((x for x in live if states[x.tid].state not in ALIVE), live[0] if live else None)
        # else one that ended in the look (it waits on nothing now); one only missing from the newest sample, no
        t = t or next((x for x in waiting if states[x.tid].state == "ended"), None)
        if t is None:
            continue
        m = states[t.tid]
        # else the library function it was started on (its target: socketserver's serve_forever), not threading's
        frame = (
            t.user_frame
            or proof.waits_at(t)
            or next((f for f in reversed(t.frames) if not f.file.endswith("/threading.py")), None)
        )
        site = timers.rearm_site(v) if m.state == "looping" else None  # the timers re-arm: the line that starts each
        place = Frame(site.function, site.file, site.line, site.code) if site is not None else frame
        left = t.last.wakes_in if t.last.syscall == "futex" else None
        how = (
            f"fires in {duration_text(left)},"
            if _a_timer(t) and left is not None
            else ("waits with no timeout" if t.last.timeout is False else f"waits in a {t.wait_text},")
            if t.waits_forever
            else f"retries `{retry}`, its loop's only way out,"
            if (retry := retries(v, t))
            else "wakes again and again in a poll or sleep loop"
            if t.woke_often
            else "waits"
        )
        names = ", ".join(f"'{x.name}' at {describe(proof.waits_at(x))}" for x in waiting[:4])
        said = (
            f"{v.label()} has finished (or raised) and is exiting, but waits for its "
            f"{'timer' if _a_timer(t) else 'non-daemon thread' if len(live) < 2 else 'thread'} "
            f"'{t.name}', which {how} at {describe(frame)}: the process exits only when that thread ends"
            + (
                "."
                if len(live) < 2
                else f" (or is a daemon: which of its {len(live)} threads are daemons is not read)."
            )
            + (f" {m.fact[:1].upper()}{m.fact[1:]}." if m.state in ("looping", "ended", "started") else "")
        )
        facts = (
            "main thread in threading._shutdown (the interpreter joins every non-daemon thread at exit)",
            f"threads it waits for: {names}",
            *((f"thread '{t.name}': the kernel's {t.wait_text}",) if t.last.syscall else ()),
            f"thread '{t.name}': {m.state} ({m.fact})",
        )
        hits.append(
            named_at(
                v,
                t,
                place,
                Cause.CODE_DEADLOCK,
                0.85,
                said,
                facts,
                (
                    "Cancel the timer on every path out of the program, errors included (try/finally: "
                    "timer.cancel()), and a callback that starts the next timer checks a stop flag first; "
                    "or make it a daemon (timer.daemon = True before timer.start()).",
                    *EXIT_JOIN_FIX[1:],
                )
                if _a_timer(t)
                else EXIT_JOIN_FIX,
            )
        )
    return hits
