"""DataLoader causes: a worker stuck in user code, a batch that was lost, inherited fork locks.

Signatures (torch 2.13, docs/facts.md#stacks-of-a-waiting-job): the main process waits in
``_try_get_data``; an idle worker sits in ``_worker_loop`` at ``index_queue.get``; a busy worker
has the fetcher (``fetch.py``) or user frames above ``_worker_loop``.
"""

from __future__ import annotations

import signal

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose import proof
from hangwatch.diagnose.scene import Hit, Scene, named, named_at
from hangwatch.diagnose.state import thread_state
from hangwatch.diagnose.views import (
    ProcessView,
    ThreadView,
    bounded_ending,
    describe,
    described,
    exit_words,
    innermost_user,
)
from hangwatch.diagnose.waits import semaphore_wait
from hangwatch.diagnose.workers import busy_frames, held_batch, sample_named, worker_state
from hangwatch.fixes import (
    BATCH_LOST_FIX,
    FORK_FIX,
    FORK_IMPORT_FIX,
    NETWORK_FIX,
    OOM_FIX,
    PREEXEC_FIX,
    SHUTDOWN_FIX,
    STORAGE_FIX,
    WORKER_DIED_FIX,
    WORKER_SLOW_FIX,
    WORKER_STUCK_FIX,
)
from hangwatch.records.evidence import Frame, Role
from hangwatch.records.incident import Finding
from hangwatch.records.values import frozen


def fork_lock_suspect(worker: ProcessView, t: ThreadView, parent: ProcessView | None) -> list[str]:
    """Evidence that a blocked forked process waits on a lock its parent held at fork time.

    Needs all of: forked (not spawned), blocked (idle, low CPU), at a lock line or in native code
    with one OS thread left; and a parent that runs other user threads (the likely holders).
    """
    if not (worker.info.forked_from_parent or t.any_frame(lambda f: sg.at(f, *sg.FORK_LAUNCH))):
        return []
    if not t.idle_throughout or (t.cpu_percent or 0.0) > 5.0:
        return []
    user = t.user_frame
    lock_line = user is not None and sg.is_lock_line(user.code)
    one_thread = worker.ev.samples[-1].num_threads == 1
    futex = (t.last.wchan or "").startswith("futex")
    imports = futex and _import_lock_alone(worker, t)
    if not (lock_line or imports or (one_thread and futex and user is not None and t.frames[0] is user)):
        return []
    holders = parent.user_threads if parent else []
    if not holders and not imports:
        return []
    at = "a module's import lock" if imports else "a lock" if lock_line else "a native call"
    source = f"pid {worker.info.ppid}" if parent is not None else "its parent"  # (reparented: its parent is not known)
    ev = [f"{worker.label()} was forked from {source} and is blocked at {at}: {described(user)}"]
    if imports:
        ev.append(
            "a module's import lock is re-entrant for the thread that owns it: its owner is a thread fork did not copy"
        )
    if futex:
        ev.append(f"kernel wait: {t.last.wchan} (a futex: lock or condition)")
    ev.append(
        f"{worker.label()} has {worker.ev.samples[-1].num_threads} OS thread(s): fork copied only the forking thread"
    )
    if holders:
        ev.append(
            "the parent runs other user threads that may hold it: "
            + ", ".join(f"'{h.name}' in {describe(h.user_frame)}" for h in holders[:3])
        )
    return ev


def _import_lock_alone(v: ProcessView, t: ThreadView) -> bool:
    """``t`` waits on a module's import lock in a process of one thread in every sample: the lock is re-entrant for
    its owner, so its owner is a thread fork did not copy."""
    return proof.sync_wait(t) == proof.IMPORT_LOCK and all(s.num_threads == 1 for s in v.ev.samples)


def shutdown_rule(scene: Scene) -> list[Hit]:
    """dataloader.shutdown: a process whose main thread is in torch's own ending of its DataLoader workers, a
    bounded wait (``state.bounded_ending``): seen on an H100 as 10 s of silence at the exit of a healthy job with two
    persistent pinned-memory workers, which a short --min-stall called hung. The state module proves it works."""
    hits: list[Hit] = []
    for v in scene.views:
        t = v.main_thread
        ending = bounded_ending(t) if v.role in (Role.MAIN, Role.RANK, Role.CHILD) else None
        if t is None or ending is None:
            continue
        at = next(f for f in t.frames if sg.at(f, sg.DATALOADER_PY, sg.DATALOADER_SHUTDOWN))
        workers = scene.workers_of(v.pid)
        bound = 2 * sg.WORKER_JOIN_S * max(1, len(workers))
        fact = f"{v.label()} {ending}: at most {bound:.0f} s for its {len(workers)} live worker(s)"
        said = (
            f"{v.label()} is ending its DataLoader workers (torch waits up to "
            f"{sg.WORKER_JOIN_S:.0f} s for each, then terminates it): it ends by itself."
        )
        facts = (fact, *(f"worker pid {w.pid}: {w.state}, {w.cpu_text()}" for w in workers[:4]))
        hits.append(
            named_at(v, t, innermost_user(t.frames) or at, Cause.DATALOADER_SHUTDOWN, 0.7, said, facts, SHUTDOWN_FIX)
        )
    return hits


def dataloader_rule(scene: Scene) -> list[Hit]:
    """dataloader.*: the main process waits for a batch; which worker is stuck, died, or lost it."""
    hits: list[Hit] = []
    for main, mt in scene.loader_waiters():
        workers = scene.workers_of(main.pid)
        states = {w.pid: (worker_state(w.main_thread) if w.main_thread else "unknown") for w in workers}
        waiting_at = innermost_user(mt.frames)
        waits = f"{main.label()} waits for a DataLoader batch at {describe(waiting_at)}"
        if any(sg.at(f, sg.DATALOADER_PY, frozenset({"_reset"})) for f in mt.frames):
            waits += ", at an epoch start (DataLoader._reset: persistent workers were asked to resume)"
        gone = [w for w in workers if w.main_thread is not None and _died(w)]
        hits.extend(_dead_worker(main, mt, w, workers.index(w), waiting_at, waits) for w in gone)
        busy = [w for w in workers if states[w.pid] == "busy" and w not in gone]
        idle = [w for w in workers if states[w.pid] == "idle"]
        for w in busy:
            if w.main_thread is not None:
                hits.extend(_busy_worker(main, mt, w, w.main_thread, workers, states, waits))
        if busy or gone or not workers:
            continue
        if len(idle) == len(workers):
            hits.append(_batch_lost(main, mt, workers, waiting_at, waits))
    return hits


def _died(w: ProcessView) -> bool:
    """A worker that has exited with a status that is not 0, read from its zombie (one that ended in the look, its
    status not read, may have ended cleanly: an IterableDataset's share done)."""
    status = w.ev.samples[-1].exit_status if w.ev.samples else None
    return w.state.startswith("Z") and status is not None and status != 0


def _dead_worker(
    main: ProcessView, mt: ThreadView, w: ProcessView, index: int, waiting_at: Frame | None, waits: str
) -> Hit:
    """dataloader.worker_died: a worker the main process waits on has exited (a zombie its parent has not reaped,
    or one that ended during the look): the main process's DataLoader raises for it at its next check of its
    workers. Named only: the graph's chain ends at the dead worker, whose exit ends the wait (not a hang)."""
    assert w.main_thread is not None  # noqa: S101 - the caller keeps only workers with a thread read
    fact = thread_state(w, w.main_thread).fact
    status = w.ev.samples[-1].exit_status or 0  # (``_died``: read, and not 0)
    killed = status & 0x7F == signal.SIGKILL
    last = innermost_user(busy_frames(w.main_thread))  # (said; the place is main's: its wait ends with the exit)
    name = f"worker {index} (pid {w.pid})"
    said = (
        f"DataLoader {name} has exited ({exit_words(status)})"
        + (f", last seen in {describe(last)}" if last is not None else "")
        + f"; {main.label()} raises for it at its DataLoader's next check of its workers: a crash, not a hang."
        + (" SIGKILL is usually the out-of-memory killer." if killed else "")
    )
    return named_at(
        main,
        mt,
        waiting_at,
        Cause.DATALOADER_WORKER_DIED,
        0.9,
        said,
        (waits, f"{name}: {fact}"),
        WORKER_DIED_FIX + (OOM_FIX if killed else ()),
    )


def _busy_worker(
    main: ProcessView,
    mt: ThreadView,
    w: ProcessView,
    t: ThreadView,
    workers: list[ProcessView],
    states: dict[int, str],
    waits: str,
) -> list[Hit]:
    index = workers.index(w)
    at = busy_frames(t)
    frame = innermost_user(at) or next((f for f in at if not sg.is_stdlib_file(f.file)), None)
    name = f"worker {index} (pid {w.pid})"
    others = [o for o in workers if o is not w]
    ev = [
        waits,
        f"{name} at {w.cpu_text()} for {w.duration_s:.0f} s in {described(frame)}",
    ]
    holds = held_batch(w)
    if holds is not None:
        ev.append(f"{name} {holds}")
    sample = sample_named(w, t)
    if sample is not None:
        ev.append(f"the sample, by the locals of the dataset's code: {sample}")
        holds = f"{holds}; the sample: {sample}" if holds is not None else f"is on the sample: {sample}"
    if others:
        ev.append("other workers: " + ", ".join(_other_worker(o, states[o.pid]) for o in others))
    hits: list[Hit] = []
    fork_ev = fork_lock_suspect(w, t, main)
    if fork_ev:  # the graph proves it where nothing in the worker can wake it (graph._thread_waits)
        hits.append(_inherited(w, t, frame, f"DataLoader {name}", main.pid, [waits, *fork_ev]))
    held = _held_by_main(mt, t, frame)
    if held is not None:
        hits.append(_lock_across_processes(main, name, w, t, frame, held, waits))
    else:
        hits.extend(semaphore_wait(w, t, f"DataLoader {name}", waiter_of=main, waits=waits))
    said = _worker_named(w, t, frame, name, ev)
    conf = 0.6 if fork_ev else said.confidence
    words = said.summary + (
        f" It {holds}." if holds is not None and holds.startswith(("has", "holds batch", "is on")) else ""
    )
    hits.append(named_at(w, t, frame, said.cause, conf, words, ev, said.fix))
    return hits


@frozen
class _Named:
    cause: Cause
    summary: str
    confidence: float
    fix: tuple[str, ...]


def _slow(summary: str, confidence: float = 0.6) -> _Named:
    return _Named(Cause.DATALOADER_WORKER_SLOW, summary, confidence, WORKER_SLOW_FIX)


def _stuck(summary: str) -> _Named:
    return _Named(Cause.DATALOADER_WORKER_STUCK, summary, 0.9, WORKER_STUCK_FIX)


def _worker_named(w: ProcessView, t: ThreadView, frame: Frame | None, name: str, ev: list[str]) -> _Named:
    """What a busy worker is doing, in words, from its state (``diagnose/state.py``); ``ev`` gets the facts. The
    verdict and its proof are the verdict stage's, from the same state and the worker's chain; only a worker whose
    state proves it unable to go on "never returns" its batch, in words."""
    m = thread_state(w, t)
    at = describe(frame)
    if m.state == "gone":  # ended in the look, its status not read (a zombie's names dataloader.worker_died)
        ev.append(f"{name}: {m.fact}")
        return _slow(f"DataLoader {name} has exited, last seen in {at}; the main process gets its exit.", 0.4)
    if m.state == "working":
        advances = m.motion is not None and m.motion.advanced  # (one long call per turn: its locals stay)
        how = f"its loop advances: {m.motion.evidence}" if m.motion is not None and advances else m.fact
        ev.append(how if advances else f"{how}: it works")
        return _slow(f"DataLoader {name} is alive, working in {at}: {how}; the main process waits for its batch.")
    if m.state == "spinning":
        if m.motion is not None:
            ev.append(f"locals of {at}: {m.motion.evidence}")
        ends = (
            "and never returns its batch"
            if m.proves_hang
            else f"and has not returned its batch in the {w.duration_s:.0f} s window"
        )
        return _stuck(f"DataLoader {name} is spinning at {w.cpu_text()} in {at} {ends}; the main process waits for it.")
    if m.state == "wakes":
        ev.append(f"{name} {m.fact}: it moves")
        loop = "a sleep, poll or retry loop"
        return _slow(f"DataLoader {name} is alive in {at}: it {m.fact} ({loop}), so its batch is slow, not lost.")
    if m.state in ("long_sleep", "looping"):  # a timer past every bound, or a sleep in a loop with no way out
        ev.append(f"{name} {m.fact}")
        return _stuck(
            f"DataLoader {name} sleeps in {at} and never returns its batch: {m.fact}; the main process waits for it."
        )
    if m.state == "asleep":  # a timed sleep or wait: a back-off, a rate limit, a slow source
        ev.append(f"{name} is {m.fact}: its timer ends by itself")
        timer = "a timed sleep or wait: its timer ends by itself"
        said = f"DataLoader {name} is asleep in {at} ({timer}), so its batch is slow, not lost"
        return _slow(f"{said}; the main process waits for it.")
    if m.state == "brief":  # one sample, or a sleep seen briefly (a capture cut short on a loaded machine)
        ev.append(f"{name} was {m.fact}")
        return _slow(
            f"DataLoader {name} is in {at}, {m.fact}, so its batch is not called lost; the main process waits for it.",
            0.5,
        )
    # a native wait of a process fork left one thread (a Future of an executor fork copied without its threads too)
    found = proof.nobody_releases(w, t)
    fact, alone = (found[0] if found and not found[1] else None), (found[0] if found and found[1] else None)
    blocked_in = "a network call" if t.any_frame(sg.is_network_frame) else "a blocking call"
    ends = (
        "and never returns its batch: nothing can end its wait"
        if fact
        else "and never returns its batch: it is the worker's only thread, in a futex wait private to it with no "
        "timeout, which no other thread can end (what fork copies held: a lock, a thread pool's barrier)"
        if alone
        else f"and has not returned its batch: nothing moved in the {w.duration_s:.0f} s window"
    )
    said = f"DataLoader {name} is blocked in {blocked_in} in {describe(frame)} {ends}; the main process waits for it."
    summary, fix = _what_it_waits_on(name, t, frame, ev, said)
    if fact is not None:
        ev.append(f"the kernel says: {t.wait_text}; no other thread of the worker runs")
        # A wait in the user's own code that nothing can end: num_workers=0 would block at the same line in the
        # main process, so no DataLoader setting is a remedy (recover/remedy.py, the exit code: do not requeue).
        fix = (
            *fix[:1],
            "Give the wait a timeout (Event.wait(timeout=...), Queue.get(timeout=...)) or make sure "
            "something sets it on every path.",
            *fix[1:2],
        )
    elif alone is not None:
        fix = (*FORK_FIX, *fix[1:2])  # a fork artifact: the worker started another way does not inherit it
    return _Named(Cause.DATALOADER_WORKER_STUCK, summary, 0.9, fix)


MP_SYNC_PY = "multiprocessing/synchronize.py"  # SemLock: a lock shared across processes (stdlib)


def _held_by_main(mt: ThreadView, t: ThreadView, frame: Frame | None) -> tuple[ThreadView, Frame, str] | None:
    """The frame of the main process's waiting thread ``mt`` that holds the lock a blocked worker
    waits for, as its source shows it (a `with lock:` block around the line where it waits for the
    batch). Only that thread: another thread holding a lock of the same name proves nothing."""
    if not t.idle_throughout or frame is None or not t.any_frame(lambda f: sg.at(f, MP_SYNC_PY)):
        return None  # a threading lock is the fork's copy, not shared: fork.inherited_lock explains that
    name = sg.lock_name(frame.code)
    if name is None:
        return None
    for f in mt.frames:
        for h in f.holds:
            if h.rstrip("()").rsplit(".", 1)[-1] == name:
                return mt, f, h
    return None


def _lock_across_processes(
    main: ProcessView,
    name: str,
    w: ProcessView,
    t: ThreadView,
    frame: Frame | None,
    held: tuple[ThreadView, Frame, str],
    waits: str,
) -> Hit:
    """Both sides of a lock shared across processes: the worker waits for it, main holds it while it
    waits for that worker's batch (the graph's cycle through the lock and the batch proves it)."""
    mt, mf, lock = held
    said = (
        f"DataLoader {name} waits for the lock `{lock}` at {describe(frame)}, which {main.label()} holds "
        f"at {describe(mf)} while it waits for that worker's batch: a deadlock across processes."
    )
    facts = (
        waits,
        f"{name} blocked at {w.cpu_text()} at {describe(frame)} `{frame.code if frame else ''}`",
        f"{main.label()} holds `{lock}`: thread '{mt.name}' runs {describe(mf)} inside its "
        f"`with {lock}:` block (or after `{lock}.acquire()`)",
    )
    return named_at(
        w,
        t,
        frame,
        Cause.CODE_DEADLOCK,
        0.93,
        said,
        facts,
        (
            f"Release `{lock}` before iterating the DataLoader (the main process holds it at {describe(mf)}), "
            "or do not take it in dataset code.",
            "Locks shared with DataLoader workers are held across processes: a worker that needs one the main "
            "process holds while it waits for a batch never returns.",
            "DataLoader(timeout=600) so a stuck worker raises instead of hanging silently.",
        ),
    )


def _other_worker(o: ProcessView, state: str) -> str:
    """How another worker is, in the state module's words: one in dataset code (``busy``) is said to be what its
    measured state is (working, waking, blocked on the same lock, say), never "busy" by its place alone."""
    t = o.main_thread
    if state != "busy" or t is None:
        return f"pid {o.pid} {state}"
    m = thread_state(o, t)
    return f"pid {o.pid} {m.fact}" if m.fact.startswith(m.state) else f"pid {o.pid} {m.state}: {m.fact}"


def _what_it_waits_on(
    name: str, t: ThreadView, frame: Frame | None, ev: list[str], summary: str
) -> tuple[str, tuple[str, ...]]:
    """Name what a blocked worker waits on (a TCP peer, a file and its filesystem) and its own fix (else ``summary``
    and a stuck worker's)."""
    fix: tuple[str, ...] = WORKER_STUCK_FIX
    waited = t.last.fd_target
    if t.last.syscall and waited:
        ev.append(f"blocked in {t.last.syscall}() on {waited}")
        if waited.startswith(sg.NETWORK_FD_PREFIXES):
            peer = waited.rsplit("->", 1)[-1].strip()
            summary = (
                f"DataLoader {name} waits on a {waited.split()[0].upper()} read from {peer} in "
                f"{describe(frame)}, with no timeout; the main process waits for its batch."
            )
            fix = NETWORK_FIX + WORKER_STUCK_FIX[1:]
        elif waited.startswith("/"):
            summary = (
                f"DataLoader {name} waits on a read of {waited} in {describe(frame)}; the main "
                "process waits for its batch."
            )
            if any(f"({fs}" in waited for fs in sg.NETWORK_FILESYSTEMS):
                summary += " That file is on a network filesystem."
            fix = STORAGE_FIX + WORKER_STUCK_FIX[1:]
    if t.last.wchan:
        ev.append(f"kernel wait of {name}: {t.last.wchan}")
    return summary, fix


def _batch_lost(
    main: ProcessView, mt: ThreadView, workers: list[ProcessView], waiting_at: Frame | None, waits: str
) -> Hit:
    ev = [
        waits,
        f"all {len(workers)} workers are alive and idle, waiting for work: pids "
        + ", ".join(str(w.pid) for w in workers),
    ]
    conf = 0.75
    tail = main.ev.output_tail or ""
    err = sg.feeder_failed(tail)
    if err is not None:
        ev.append(f"the log shows a worker's queue feeder thread failed: {err}")
        conf = 0.92
    if mt.idle_throughout:
        ev.append(f"main thread idle for {main.duration_s:.0f} s")
    said = (
        "The main process waits for a batch that no worker is producing: every worker is alive "
        "and idle, so a finished batch was lost on its way back (it failed to pickle, or shared "
        "memory ran out in a worker's feeder thread)."
    )
    # the graph's edge from main's wait to nobody proves it, where every worker was seen idle
    return named_at(main, mt, waiting_at, Cause.DATALOADER_BATCH_LOST, conf, said, ev, BATCH_LOST_FIX)


def fork_rule(scene: Scene) -> list[Hit]:
    """Forked children outside DataLoader (plain multiprocessing.Process, pools) blocked on an inherited lock."""
    hits = []
    loader_workers = {w.pid for m, _ in scene.loader_waiters() for w in scene.workers_of(m.pid)}
    for v in scene.views:
        t = v.main_thread
        if v.pid in loader_workers or t is None or not t.has_stack:
            continue
        parent = scene.view(v.info.ppid)
        ev = fork_lock_suspect(v, t, parent)
        if ev:  # the graph proves it where nothing in the child can wake it (graph._thread_waits)
            preexec = t.any_frame(lambda f: sg.at(f, "subprocess.py", frozenset({"_execute_child"})))
            importing = _import_lock_alone(v, t)
            forked_from = v.info.ppid if parent is not None else None  # (reparented: its parent is no longer known)
            hits.append(_inherited(v, t, t.user_frame, v.label(), forked_from, ev, preexec, importing))
    return hits


def _inherited(
    v: ProcessView,
    t: ThreadView,
    frame: Frame | None,
    who: str,
    forked_from: int | None,
    ev: list[str],
    preexec: bool = False,
    importing: bool = False,
) -> Hit:
    """fork.inherited_lock: ``who`` blocked on a lock it likely inherited, held, when it was forked from pid
    ``forked_from`` (a DataLoader's forkserver worker: its DataLoader's process, not its parent); ``preexec``: in the
    preexec_fn Popen runs in the child. 0.85, a worker's too: ahead of its parent's wait (child.wait, 0.82)."""
    how = ", in the preexec_fn Popen runs in the child before it execs." if preexec else "."
    source = f"pid {forked_from}" if forked_from is not None else "its parent"
    said = f"{who} is blocked on a lock it likely inherited, already held, when it was forked from {source}"
    if importing:  # (re-entrant for its owner: certainly inherited)
        said = f"{who} waits on a module's import lock that a thread of {source} held when it forked"
    fix = PREEXEC_FIX if preexec else FORK_IMPORT_FIX if importing else FORK_FIX
    return named(Finding(Cause.FORK_INHERITED_LOCK, 0.85, said + how, v.where(t, frame), tuple(ev), fix))
