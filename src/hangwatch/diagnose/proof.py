"""Proof: the measured facts that let a verdict stand without waiting for the clock.

A *proof of a hang* says the job cannot recover by itself, so the first look may declare it
(docs/stalls.md#what-counts-as-proof-of-a-hang): a wait no thread will release (blocked, the kernel says the
wait has no timeout, and no other thread of the process runs), a lock cycle, a counting spin, a stopped
process, a prompt, ranks in different collectives, lost work, a process left by fork with one thread in a
private futex. A *proof of work* says the job works (a loop that walks its data, one long call, bytes moving, CPU
with a moving stack), so the step history never declares it hung; only --max-slow does.
"""

from __future__ import annotations

import itertools
import signal

from hangwatch import signatures as sg
from hangwatch.diagnose.views import IDLE_CPU_PERCENT, ProcessView, ThreadView, describe, innermost_user
from hangwatch.records.evidence import Frame
from hangwatch.records.incident import Proof, ProofKind


def hang(fact: str) -> Proof:
    """A proof that the job cannot recover by itself."""
    return Proof(ProofKind.HANG, fact)


def work(fact: str) -> Proof:
    """A proof that the job works."""
    return Proof(ProofKind.WORK, fact)


def article(word: str) -> str:
    """``a`` or ``an``."""
    return "an" if word[:1] in "aeiou" else "a"


def others_waiting(v: ProcessView, tid: int) -> list[ThreadView]:
    """The threads of ``v`` but ``tid`` blocked in the user's own code for the whole window."""
    return [o for o in v.threads if o.tid != tid and o.has_stack and o.blocked and o.user_frame is not None]


def waiting_words(threads: list[ThreadView]) -> str:
    """Where each of ``threads`` (three at most) waits, and on what, in words, its line's code too."""

    def on(t: ThreadView) -> str:
        k = sync_wait(t)
        return f"on {article(k)} {k}" if k else f"in {t.last.syscall or 'a blocking call'}()"

    return ", ".join(
        f"thread '{t.name}' {on(t)} at {describe(t.user_frame)}"
        + (f" `{t.user_frame.code}`" if t.user_frame and t.user_frame.code else "")
        for t in threads[:3]
    )


QUEUE_TASKS = "queue's unfinished tasks"
IMPORT_LOCK = "module's import lock"
IMPORTLIB = "<frozen importlib._bootstrap>"


def sync_wait(t: ThreadView) -> str | None:
    """How a blocked thread waits, if on a thread-level primitive: 'lock', 'event', 'condition', 'semaphore', 'queue',
    QUEUE_TASKS (a queue's join), 'join' (a thread's), 'barrier', IMPORT_LOCK (an import of a module another thread
    is importing)."""
    frames = t.frames
    if not frames or not t.idle_throughout:
        return None
    user = innermost_user(frames)
    if user is not None and sg.SLEEP_LINE.search(user.code or ""):
        return None
    top = frames[0]
    if sg.is_user(top) and sg.is_lock_line(top.code):
        return "lock"
    for f in frames:  # a Barrier waits on its condition: what it waits for is the parties still to come
        if sg.is_user(f):
            break
        if f.file.endswith("/threading.py") and f.function.startswith("Barrier."):
            return "barrier"
    lib = list(itertools.takewhile(lambda f: not sg.is_user(f), frames))  # the library's frames, innermost first
    if any(f.file.endswith("/queue.py") and sg.method(f) in ("get", "put") for f in lib):
        return "queue"  # a queue's get or put waits on the queue's own condition (threading.py, innermost)
    if any(f.file.endswith("/queue.py") and sg.method(f) == "join" for f in lib):
        return QUEUE_TASKS  # its join waits for a task_done() of each item put
    if any(f.file == IMPORTLIB and f.function == "_ModuleLock.acquire" for f in lib):
        return IMPORT_LOCK  # a module's import lock: the thread importing that module holds it until its top level ends
    if any(f.file.endswith("/threading.py") and f.function.startswith("Semaphore.") for f in lib):
        return "semaphore"  # (a BoundedSemaphore's code is Semaphore's) it waits on a condition of its own
    for f in lib:
        if sg.matches_any(f, sg.THREAD_SYNC):
            if f.file.endswith("asyncio/base_events.py"):
                return None  # an event loop waits for I/O or timers, not for a thread
            m = sg.method(f)
            if m in ("join", "_wait_for_tstate_lock"):
                return "join"
            if m in {"acquire", "__enter__"}:
                return "lock"
            if lib[-1].function.startswith("Condition.") and lib[-1].file.endswith("/threading.py"):
                return "condition"  # the user's own call (an Event's, a Semaphore's wait is on a Condition too)
            return "event"
    # a library's line that takes a lock, where the kernel shows a wait on memory of its own process (logging's
    # handler lock, `self.lock.acquire()`; a multiprocessing lock's is shared)
    return "lock" if sg.is_lock_line(top.code) and private_futex(t) else None


SYNC_MODULES = ("/threading.py", "/queue.py")


def user_owned(t: ThreadView, futures: bool = False) -> bool:
    """The wait is the user's own call on a threading primitive (``event.wait()``, ``q.get()``,
    ``lock.acquire()``, ``with lock:``): between the user's frame and the wait there is only threading.py
    and queue.py. A primitive a library waits on (Pool's result event) is released by that library's threads.
    ``futures``: a concurrent.futures Future's ``result()`` or ``wait()`` too: a thread of the process completes it
    (an executor's worker, a ProcessPoolExecutor's manager woken by a worker's result), as one sets an event."""
    modules = (*SYNC_MODULES, FUTURES_BASE) if futures else SYNC_MODULES
    for f in t.frames:
        if sg.is_user(f) or timer_run(f):  # a Timer's event: only the user's cancel() sets it
            return True
        if not f.file.endswith(modules):
            return False
    return False


def waits_at(t: ThreadView) -> Frame | None:
    """Where ``t`` waits, for the words: its innermost frame of the user's, else the Timer it runs."""
    return innermost_user(t.frames) or next((f for f in t.frames if timer_run(f)), None)


def wait_place(t: ThreadView) -> str:
    """Where ``t`` waits, in words (``waits_at``); a main thread with no frame of the user's left, in the
    interpreter's exit, is at that exit."""
    at = waits_at(t)
    return EXIT_PLACE if at is None and exit_join(t) else describe(at)


EXIT_PLACE = "its exit, where the interpreter joins every non-daemon thread (threading._shutdown)"


def timer_run(f: Frame) -> bool:
    """``f`` is a ``threading.Timer`` waiting to fire (its ``run``)."""
    return f.function == "Timer.run" and f.file.endswith("/threading.py")


FUTURES_BASE = "concurrent/futures/_base.py"
PARKING_CALLS = frozenset({"futex", "pause"})  # waits only a thread of the process (or a signal) can end


def waits_on_future(t: ThreadView) -> bool:
    """The thread waits in ``Future.result()`` / ``wait()`` of concurrent.futures: a frame of it between the wait and
    the user's innermost frame (not a lock taken in a done-callback that ``set_result`` runs, further out)."""
    return any(f.file.endswith(FUTURES_BASE) for f in itertools.takewhile(lambda f: not sg.is_user(f), t.frames))


# Signals whose Python handler may end a wait of the main thread: 1-64 but SIGINT (2, a person's Ctrl-C); 32 and 33,
# which glibc keeps for itself (thread cancellation, setxid: caught in every process that imports torch; they run no
# Python); the faults a process raises on itself, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV (faulthandler's: it prints
# and dies); and a profiler's SIGVTALRM and SIGPROF. SIGCHLD (torch's DataLoader keeps its handler) counts only where a
# child lives to send it.
HANDLED = ((1 << 64) - 1) & ~sum(1 << (n - 1) for n in (2, 4, 6, 7, 8, 11, 26, 27, 32, 33))
SIGCHLD = 1 << (17 - 1)
# Of those, the ones whose handler may let the job go on: not SIGHUP, SIGQUIT, SIGTERM, which come to end it (a
# scheduler's preemption, hangwatch's own kill, a closed terminal): a wait only they end is not a way forward.
GOES_ON = HANDLED & ~sum(1 << (n - 1) for n in (1, 3, 15))


def shares_with_none(v: ProcessView, t: ThreadView) -> bool:
    """Only ``t`` could change a multiprocessing Value its loop reads, and it read it again after any other could: no
    other process of the job was alive at any sample of the window (``ProcessView.alone``: one that set it and exited
    just before is a zombie from the first sample on), no other process of the host maps its heap after the window
    (``heap_sharers``: a daemon forked off, the parent of a process attached to), ``t`` woke again and again in the
    window (its loop read the value each time and went on), no signal handler of ``v`` may run, and every other
    thread of it is parked in a futex of its own."""
    others = (o for o in v.threads if o.tid != t.tid)
    lone = v.alone and v.ev.heap_sharers == () and t.woke_often and not handlers_may_run(v)
    return lone and all(o.parked and private_futex(o) for o in others)


def private_futex(o: ThreadView) -> bool:
    """Its newest call is a futex wait on memory of its own process (a lock, an event: not a multiprocessing one's)."""
    return o.last.syscall == "futex" and not o.last.shared_futex


def handlers_may_run(v: ProcessView, signals: int = HANDLED, unread: bool = True) -> bool:
    """Whether ``v`` has a signal handler (SigCgt) for one of ``signals`` that may still come (SIGCHLD only while a
    child lives); ``unread``: the answer where SigCgt was not read (a capture recorded before it was)."""
    mask = caught(v, signals)
    return unread if mask is None else bool(mask)


SIGALRM = 1 << (14 - 1)  # what the process's own timers send (signal.alarm, setitimer): their time /proc does not show
TIMER_WORDS = "a timer of its own (signal.alarm, setitimer), whose time the look cannot read, may send SIGALRM"
ENDS = ((1 << 64) - 1) & ~sum(1 << (n - 1) for n in (17, 18, 19, 20, 21, 22, 23, 28, 32, 33))  # default: the end


def caught(v: ProcessView, signals: int = HANDLED) -> int | None:
    """Which of ``signals`` ``v`` has a handler for that may still come (a mask, as SigCgt's bits; SIGCHLD only while a
    child that may exit lives); None where SigCgt was not read."""
    mask = v.info.caught_signals
    return None if mask is None else mask & (signals if v.parent else signals & ~SIGCHLD)


def alarmed(v: ProcessView) -> str | None:
    """A timer of its own that may end any wait of ``v``'s main thread at a time the look cannot read, in words: a
    Python process's SIGALRM handler (signal.alarm's timeout idiom), or a POSIX timer's signal (``/proc/PID/timers``:
    ``flock -w``'s) it catches or that ends it; else None (a native SIGALRM handler alone is GNU sort's clean-up)."""
    own, mask = sum(1 << (n - 1) for n in v.info.timer_signals or ()), v.info.caught_signals
    if v.info.is_python and caught(v, SIGALRM):
        return f"{TIMER_WORDS}, whose handler may end it"
    made = "a timer it created (timer_create), whose time the look cannot read, may send it"
    handled, ends = (own & mask & HANDLED, own & ~mask & ENDS) if mask is not None else (0, 0)
    if handled or ends:
        return f"{made} {signal_names(handled or ends)}, " + ("which it catches" if handled else "which ends it")
    return None


# waits a handler may end (it sets, notifies, puts, returns)
INTERRUPTIBLE = frozenset({"event", "condition", "semaphore", "queue", QUEUE_TASKS, "join", "barrier"})


def exit_join(t: ThreadView) -> bool:
    """Main is in the interpreter's exit, joining the non-daemon threads (``threading._shutdown``): its wait ends only
    when they have."""
    return any(sg.at(f, "threading.py", sg.EXIT_JOIN) for f in t.frames)


def handler_may_end(v: ProcessView) -> bool:
    """Whether a Python signal handler may run in ``v`` and end a wait of any of its threads: Python runs handlers on
    the main thread, inside a lock's acquire (a signal interrupts it, the handler runs, the acquire goes on), so where
    the main thread waits on an event, a queue, a join (the exit's too) or a barrier and ``v`` has a handler for a
    signal that may let the job go on (``GOES_ON``: a SIGUSR1 a worker sends when done, SIGCHLD while a child that may
    exit lives; SigCgt unread, as in a capture recorded before it was: none), that handler may set what any thread of
    it waits for. For any other wait (a lock's, an import's, one the code does not name), only SIGALRM's: a handler
    that takes a lock only waits in turn, but the timeout idiom (signal.alarm, a handler that raises) ends any wait."""
    m = v.main_thread
    if m is None or m.tid != v.pid or not (m.blocked or m.parked):
        return False
    if sync_wait(m) in INTERRUPTIBLE or exit_join(m):
        return handlers_may_run(v, GOES_ON, unread=False)
    return alarmed(v) is not None  # a timeout's handler (signal.alarm: its time unread) may raise out of it


def lock_expr(code: str | None) -> str | None:
    """The lock a blocking line takes: ``with a:`` or ``with self.a, b:`` -> its first name; ``a.acquire()`` (a
    comment on the line left out)."""
    text = (code or "").split("#", 1)[0].strip()
    if text.startswith("with "):
        return text[5:].split(",")[0].split(" as ")[0].rstrip(":").strip() or None
    if ".acquire(" in text:
        return text.split(".acquire(")[0].split()[-1].split("=")[-1].strip() or None
    return None


def reentered(t: ThreadView) -> Frame | None:
    """The older frame of ``t``'s own stack that holds the lock ``t`` waits for (a ``with`` block or an
    ``acquire()`` around its line), or None: a signal handler, a ``__del__``, a logging handler or a callback that
    takes a lock the code it interrupted holds."""
    frame = t.user_frame
    name = lock_expr(frame.code if frame is not None else None)
    if frame is None or name is None or frame not in t.frames:
        return None
    older = t.frames[t.frames.index(frame) + 1 :]
    return next((f for f in older if name in {h.rstrip("()") for h in f.holds}), None)


def _in_private_futex(v: ProcessView, t: ThreadView, threads: int) -> bool:
    """``t`` is blocked for the whole window in a futex private to ``v``, which has ``threads`` OS threads in every
    sample: what ``forsaken`` and ``all_asleep`` both read from the kernel."""
    return (
        not v.ended
        and t.blocked
        and t.last.syscall == "futex"
        and t.last.shared_futex is False
        and all(s.num_threads == threads for s in v.ev.samples)
    )


def _on(t: ThreadView) -> str:
    """What a thread in a futex waits on, where its frames say (`` on a barrier``); empty where they do not."""
    kind = sync_wait(t)
    return f" on {article(kind)} {kind}" if kind else ""


def _at(t: ThreadView) -> str:
    """Where a thread in a futex waits, for a proof's words: its innermost frame of the user's, else its innermost."""
    return describe(innermost_user(t.frames) or (t.frames[0] if t.frames else None))


def forsaken(v: ProcessView, t: ThreadView) -> Proof | None:
    """Proof that ``t`` can never be woken, from the kernel's side alone: its process has one OS thread in every sample
    (a forked child: fork copies only the forking thread), and that thread is blocked for the whole window in a futex
    private to the process with no timeout. Only a thread of the same process can wake a private futex, and there is
    none: a lock copied held by fork, an OpenMP pool's barrier after fork, whatever the native code holding it."""
    if (
        not _in_private_futex(v, t, threads=1)
        or not t.waits_forever
        or handler_may_end(v)  # a Python wait a handler may end
    ):
        return None
    return hang(
        f"{v.label()} has one OS thread in every sample, and it waits at {_at(t)} in a futex private to the process "
        f"({t.wait_text}): only a thread of the same process could wake it, and it has no other (a "
        "signal whose handler raises would end the wait; nothing else)"
    )


def signal_alone(v: ProcessView, t: ThreadView) -> bool:
    """``t`` waits for a signal alone: in ``pause()`` (or a poll of no file with no timeout) or ``sigwait()`` with no
    timeout for the whole window, and every other thread of its process parked on its own primitives (none could run
    to end it)."""
    return (
        not v.ended
        and t.blocked
        and t.waits_forever
        and t.last.syscall in ("pause", "sigwait")
        and sealed_but(v, t.tid)
    )


# The signals that come to end a job, not to let it go on: SIGHUP, SIGINT, SIGQUIT, SIGTERM (a closed terminal, a
# person's Ctrl-C, a scheduler's preemption, hangwatch's own kill).
ENDING = sum(1 << (n - 1) for n in (1, 2, 3, 15))


def signal_names(mask: int) -> str:
    """``mask``'s signals by name (bit n-1 for signal n; a real-time signal, which has none, by its number)."""
    names = []
    for n in range(1, 65):
        if mask >> (n - 1) & 1:
            try:
                names.append(signal.Signals(n).name)
            except ValueError:
                names.append(f"signal {n}")
    return ", ".join(names)


def unsignalled(v: ProcessView, t: ThreadView, alone: bool = False) -> Proof | None:
    """Proof that ``t`` waits for a signal that would never let it go on: it is in ``pause()`` (or a poll of no file
    with no timeout), or in ``sigwait()`` for SIGCHLD and, where no other process of the job lives (``alone``: none
    could send one), the signals that only end a job (its set read from its memory; unread: no proof), for the whole
    window; every other thread of its process is parked on its own primitives, no child of it that may exit lives,
    and it has no handler for a signal that may let the job go on (``GOES_ON``; SigCgt unread: no proof): a signal
    could only end it, by its default action (or from outside the job)."""
    waited = t.last.signals if t.last.syscall == "sigwait" else None
    if (
        not signal_alone(v, t)
        or v.parent  # a child that may exit lives: the job may still work (a launcher that pauses while it trains)
        or handlers_may_run(v, GOES_ON)
        or (t.last.syscall == "sigwait" and (waited is None or waited & ~((ENDING if alone else 0) | SIGCHLD)))
    ):
        return None
    where = describe(innermost_user(t.frames) or (t.frames[0] if t.frames else None))
    if waited is not None:
        senders = " and no other process of the job lives" if waited & ENDING else ""
        senders += ", no child of it that could send SIGCHLD lives" if waited & SIGCHLD else ""
        return hang(
            f"{v.label()} waits at {where} {'reading a signalfd' if t.last.fd is not None else 'in sigwait()'} for "
            f"{signal_names(waited)} (its set, read from {'its fdinfo' if t.last.fd is not None else 'its memory'}; "
            f"no timeout), no other thread of it can run{senders}, and it has no handler for a signal that would let "
            "it go on: only a process outside the job could end the wait"
        )
    return hang(
        f"{v.label()} waits at {where} for a signal alone (the kernel shows a wait on no file, with no timeout), no "
        "other thread of it can run, and it has no handler for a signal that would let it go on: one could only end it"
    )


def sealed_but(v: ProcessView, tid: int | frozenset[int]) -> bool:
    """Every thread of ``v`` but ``tid`` (or those of a set), Python or native, is parked for the whole window on a
    futex private to the process, or in ``pause()``: none can run again by itself, nor be woken by another process. A
    native thread in a read, a poll or an accept (a TCPStore server's, gloo's) may still act; so may any thread that
    woke."""
    tids = tid if isinstance(tid, frozenset) else frozenset((tid,))
    return all(
        o.tid in tids or (o.parked and o.last.syscall in ("futex", "pause") and not o.last.shared_futex)
        for o in v.threads
    )


def machinery(o: ThreadView) -> bool:
    """A library's own thread that never touches the user's primitives: named as one (a queue's feeder, the
    pin-memory loop), or running a library's own loop with no frame of the user's in its stack (tqdm's monitor,
    which every bar with a monitor interval starts: it wakes every 10 s to refresh bars; one caught writing a bar
    through the user's own file object runs the user's code, which may hold the user's lock)."""
    return any(n in o.name for n in sg.INTERNAL_THREAD_NAMES) or (
        any(f.file.endswith(sg.INTERNAL_THREAD_FILES) for f in o.frames) and not any(sg.is_user(f) for f in o.frames)
    )


def may_release(o: ThreadView) -> bool:
    """Whether another thread might release what a user's thread waits for: a Python thread that is not
    parked in a wait with no timeout, and not library machinery (a queue's feeder, the resource sharer, the
    pin-memory thread: they never touch the user's own primitives). A native thread runs no Python."""
    if o.parked or not o.has_stack:
        return False
    return not machinery(o)


def others_may_release(v: ProcessView, tid: int | None) -> bool:
    """Whether a thread of ``v`` other than ``tid`` might release what that one waits for (``may_release``)."""
    return any(may_release(o) for o in v.threads if o.tid != tid)


def may_wake(o: ThreadView) -> bool:
    """Whether a Python thread parked in a wait with no timeout may still wake and act: one waiting on something
    outside the process (a child's exit in ``waitpid``, a read, a poll) runs again when that comes; one parked on
    a lock or event private to its process (a futex) or in ``pause()`` does not by itself."""
    if not o.has_stack or (machinery(o) and not runs_callbacks(o)):
        return False
    return not (o.last.syscall in ("futex", "pause") and not o.last.shared_futex)


def runs_callbacks(o: ThreadView) -> bool:
    """A pool's result-handler thread: machinery, but it runs the callbacks of ``apply_async``/``map_async`` (one may
    set an Event or complete a Future of the user's) when a result comes."""
    return "_handle_results" in o.name or any(sg.method(f) == "_handle_results" for f in o.frames)


def native_may_act(o: ThreadView) -> bool:
    """A thread with no Python stack that may act: it used CPU, woke during the look, or waits on something other than
    a lock of its own (a read, a poll: its I/O may complete), where a native library's pool works."""
    return not o.has_stack and (
        (o.cpu_percent or 0.0) > IDLE_CPU_PERCENT
        or (o.wakeups or 0) > 0
        or o.last.syscall not in (None, "futex", "pause")
    )


def native_call_at_work(v: ProcessView, tid: int | None) -> bool:
    """Another Python thread of ``v`` is parked in a futex inside a native call (not on a Python primitive) while a
    thread with no Python stack may act (``native_may_act``): a library's native pool at work for it (tokenizers'
    ``encode_batch`` parks its caller until rayon's threads are done; an object store's client, until its I/O threads
    are), which wakes it when that work is done: it may act then."""
    if not any(native_may_act(o) for o in v.threads):
        return False
    return any(
        o.has_stack
        and o.tid != tid
        and o.frames
        and o.last.syscall == "futex"
        and not sg.stdlib_path(o.frames[0].file).endswith(PYTHON_WAITS)  # its innermost frame calls native code
        and sync_wait(o) is None
        for o in v.threads
    )


# Where a Python thread's innermost frame sits when it waits on a Python-level primitive, not in a library's native
# call (threading's own waits, the exit's joins among them, a queue's, a Future's, multiprocessing's locks)
PYTHON_WAITS = ("/threading.py", "/queue.py", "concurrent/futures/_base.py", "/multiprocessing/synchronize.py")


def unreleasable(v: ProcessView, t: ThreadView, handlers: bool = True) -> Proof | None:
    """Proof that ``t`` waits for something no thread will ever release: it is blocked for the whole window
    in its own call on a thread-level primitive (a threading lock, event, condition or queue: a futex private
    to the process), the kernel says the wait has no timeout, and no other thread of the process runs Python
    that could release it, nor may wake to (``may_wake``). A lock shared with other processes is judged by who
    holds it (diagnose/waits.py). ``handlers`` False: as if no signal handler could run (own.py follows the wait to
    those who may send the signal)."""
    if not t.blocked or not t.waits_forever or t.last.shared_futex or not user_owned(t, futures=True):
        return None
    kind = "future" if waits_on_future(t) else sync_wait(t)
    if kind is None:
        return None
    if others_may_release(v, t.tid) or any(may_wake(o) for o in v.threads if o.tid != t.tid):
        return None  # (a thread parked in waitpid or a read runs again when its child ends or its data comes)
    if native_call_at_work(v, t.tid):
        return None
    if kind == "future" and any(native_may_act(o) for o in v.threads):
        return None  # a native thread may complete a Future through a callback (a C++ client's done-callback)
    if handlers and handler_may_end(v):
        return None  # a signal handler runs on the main thread, inside its wait, and may set what this one waits for
    where = describe(waits_at(t))
    alone = (
        "it is the only thread"
        if all(o.tid == t.tid for o in v.threads)
        else "no other thread of it runs Python that could release it"
    )
    return hang(
        f"{v.label()} waits on {article(kind)} {kind} at {where}, and the kernel shows a {t.wait_text}; "
        f"{alone}, so nothing can release it"
    )


def all_asleep(v: ProcessView, t: ThreadView) -> Proof | None:
    """Proof from the kernel's side that no thread of ``v`` runs again, whoever's primitives they wait on (the user's
    or a library's: a QueueListener's join, an executor's queue): every OS thread of it, as many in every sample, is
    blocked for the whole window in a futex private to the process with no timeout (or in pause()), and no signal
    handler may end a wait of its main thread. Only a thread of the same process can wake a private futex, and each
    is asleep in one: ``forsaken``'s fact for a process of several threads (Go's "all goroutines are asleep")."""
    n = len(v.threads)
    if (
        n < 2
        or not _in_private_futex(v, t, threads=n)
        or t.last.timeout is not False
        or not sealed_but(v, t.tid)
        or handler_may_end(v)
    ):
        return None
    others = [o for o in v.threads if o.tid != t.tid and o.has_stack][:3]  # where the rest wait: the ring's other side
    also = "".join(f", {o.name!r}{_on(o)} at {_at(o)}" for o in others)
    return hang(
        f"every one of the {n} threads of {v.label()} waits in a futex private to the process with no timeout "
        f"(in every sample, none woken): {t.name!r}{_on(t)} at {_at(t)}{also}; only a thread of the same process could "
        "wake one, and none runs"
    )


def nobody_releases(v: ProcessView, t: ThreadView) -> tuple[Proof, bool] | None:
    """Proof that no thread of ``v`` can end ``t``'s wait on a primitive of its own, and whether it is fork's (the
    process left with one thread: ``forsaken``) rather than the user's (``unreleasable``). A Future of an executor
    fork copied without its threads is fork's first: its words and fix are fork's."""
    if waits_on_future(t) and (alone := forsaken(v, t)) is not None:
        return alone, True
    if (asleep := all_asleep(v, t)) is not None:
        return asleep, False  # (every thread asleep: where each waits is the fact, not only that none releases)
    if (fact := unreleasable(v, t)) is not None:
        return fact, False
    return (alone, True) if (alone := forsaken(v, t)) is not None else None
