"""child.lost_work: a process of the job vanished while it held work that the rest still waits for.

The known case: a ``multiprocessing.Pool`` worker killed mid-task (the OOM killer, a segfault in a C
extension). The pool starts a replacement, but nobody ever tells the pool that the dead worker's task is
lost: ``Pool.map`` waits forever while every worker sits idle, waiting for work. (CPython's
``concurrent.futures.ProcessPoolExecutor`` raises ``BrokenProcessPool`` instead.)

Under ``hangwatch run`` the supervisor's history of the job's processes names the one that went and when;
``inspect`` has no history, so it infers it from the present (a worker that started later than its
siblings replaced one that ended) and says it is an inference.
"""

from __future__ import annotations

import re
import time

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose import proof
from hangwatch.diagnose.raised import TRACEBACK, Raised, job_log, tracebacks
from hangwatch.diagnose.scene import Hit, Scene, named
from hangwatch.diagnose.state import process_state
from hangwatch.diagnose.views import ProcessView, ThreadView, describe, described, innermost_user
from hangwatch.fixes import (
    EXCEPTION_PICKLE_FIX,
    EXECUTOR_FIX,
    INITIALIZER_FIX,
    LOST_WORK_FIX,
    MAIN_GUARD_FIX,
    POOL_CALLBACK_FIX,
    POOL_HANDLER_FIX,
)
from hangwatch.records.evidence import Frame, VanishedProcess
from hangwatch.records.incident import Finding
from hangwatch.records.values import frozen

LATE_START_S = 0.2  # a pool worker started this much later than the next youngest replaced one that ended
# (a pool starts its workers one after another in a few milliseconds)


def _clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))


def _waits_for_results(v: ProcessView) -> bool:
    t = v.main_thread
    return t is not None and t.idle_throughout and any(sg.matches_any(f, sg.POOL_RESULT_WAIT) for f in t.frames)


def _handler_gone(v: ProcessView) -> bool:
    """The pool's result-handler thread is gone while its other machinery runs: every Python thread of the
    process was read, the pool's worker or task handler is among them, and its result handler is not. It
    ends silently on an error reading a result (a tensor whose storage was to be fetched from a worker that
    has exited): from then on, nothing hands results to the caller."""
    stacks = [t for t in v.threads if t.has_stack]
    pool = any(_runs(t, "_handle_workers") or _runs(t, "_handle_tasks") for t in stacks)
    return pool and not any(_runs(t, "_handle_results") for t in stacks)


def _runs(t: ThreadView, fn: str) -> bool:
    """The thread runs the pool's handler ``fn`` (its name says so since Python 3.10, its frames always)."""
    return fn in t.name or any(sg.method(f) == fn and sg.at(f, "multiprocessing/pool.py") for f in t.frames)


@frozen
class Lost:
    """A wait for a pool's result that nobody will hand over: the fact (the graph's end of that wait, ``nobody``,
    and its proof), and the name's words."""

    frame: Frame | None  # the main thread's, where it waits
    fact: str  # why no thread will hand the result over, measured
    summary: str
    evidence: tuple[str, ...]
    fix: tuple[str, ...]
    confidence: float
    cause: Cause = Cause.CHILD_LOST_WORK
    proves: bool = True  # False: named only, an end the clock decides (deaths of an error that may pass)


HANDLER_DIED = "(_handle_results):"  # Python's "Exception in thread Thread-3 (_handle_results):", then its traceback


def _handler_raised(v: ProcessView) -> tuple[Raised | None, bool]:
    """The exception that ended the pool's result-handler thread, from the job's output (Python prints it), and
    whether it rose from a callback: the user's code, called from the result's ``_set`` (which runs the callback),
    not from unpickling a result."""
    tail = v.ev.output_tail or ""
    at = tail.rfind(HANDLER_DIED)
    found = tracebacks(tail[at:]) if at >= 0 else ()
    raised = found[0] if found else None
    return raised, raised is not None and raised.frame is not None and ", in _set\n" in tail[at:]


# pickle rebuilds an exception as cls(*self.args): a class whose __init__ takes more than it passes on to
# Exception.__init__ cannot be rebuilt, and the result handler dies on the worker's error (CPython gh-79492)
_UNREBUILT = re.compile(r"^TypeError: [\w.]{1,200}\.__init__\(\) (?:missing \d+ required|takes \d+ positional)")


def _no_handler(v: ProcessView) -> Lost | None:
    t = v.main_thread
    if t is None or not _handler_gone(v):
        return None
    frame = innermost_user(t.frames)
    raised, callback = _handler_raised(v)
    why = (
        f"It {raised.text()}, a callback it ran."
        if raised is not None and callback
        else f"It {raised.text()}."
        if raised is not None
        else "It ends on an exception: in a callback of apply_async or map_async, which it runs, or reading a "
        "result (a tensor whose storage was to be fetched from a worker that had exited); the job's output did "
        "not show which."
    )
    return Lost(
        frame,
        "the pool's result-handler thread, the only thread that hands results to it, is no longer among its "
        "threads: no result can arrive",
        f"{_call(frame)} at {describe(frame)} waits forever: the pool's result-handler thread has exited, "
        f"so the results its workers sent are never handed over. {why}",
        (
            f"{v.label()} waits for results at {described(frame)}",
            "threads of the pool: "
            + ", ".join(f"'{x.name}'" for x in v.threads if x.has_stack)
            + "; no '_handle_results'",
            *([f"the job's output: the result handler {raised.text()}"] if raised is not None else []),
        ),
        POOL_CALLBACK_FIX + POOL_HANDLER_FIX[1:]
        if callback
        else EXCEPTION_PICKLE_FIX + POOL_HANDLER_FIX[1:]
        if raised is not None and _UNREBUILT.search(raised.exception)
        else POOL_HANDLER_FIX
        if raised is not None
        else POOL_CALLBACK_FIX + POOL_HANDLER_FIX,
        0.9,
    )


EXECUTOR_MANAGER = ("concurrent/futures/process.py", "wait_result_broken_or_wakeup")


def _executor_without_workers(scene: Scene, v: ProcessView) -> Lost | None:
    """A ProcessPoolExecutor's caller waits on a future, and the executor has no worker process: its manager
    thread, idle in its wait for a result, a wake-up or a worker's exit for the whole window, starts workers
    only when a task is submitted (the caller is waiting, not submitting) or a worker exits (none is left).
    So no worker will ever run the queued task."""
    t = v.main_thread
    if t is None or not t.idle_throughout or not proof.waits_on_future(t):
        return None
    manager = next(
        (
            x
            for x in v.threads
            if x.has_stack
            and any(f.file.endswith(EXECUTOR_MANAGER[0]) and sg.method(f) == EXECUTOR_MANAGER[1] for f in x.frames)
        ),
        None,
    )
    if manager is None or not manager.idle_throughout:
        return None
    parents = scene.pool_parents(v.pid)
    if scene.pool_workers(v.pid) or any(
        g.ppid in parents and g.gone_at >= scene.evidence.started_at for g in scene.evidence.vanished
    ):
        return None
    frame = innermost_user(t.frames)
    return Lost(
        frame,
        "the ProcessPoolExecutor has no worker process; its manager thread waited the whole window for a result, "
        "a wake-up or a worker's exit, and starts a worker only on a new submit or a worker's exit: none will come",
        f"The ProcessPoolExecutor has no worker left, and will start none: {describe(frame)} waits "
        "forever for a task that no process will run (on Python 3.11 to 3.14, max_tasks_per_child can "
        "leave the pool with no worker: cpython gh-115634).",
        (
            f"{v.label()} waits for a future at {described(frame)}",
            f"the executor's manager thread '{manager.name}' idle in its wait for the whole window",
            "no worker process among its children",
        ),
        EXECUTOR_FIX,
        0.9,
    )


def lost_work_rule(scene: Scene) -> list[Hit]:
    """child.lost_work, named where a process waits for a pool's result that nobody will hand over
    (``lost_result``); the graph's edge from that wait to nobody proves it."""
    hits = []
    for v in scene.views:
        lost = lost_result(scene, v)
        if lost is not None:
            where = v.where(v.main_thread, lost.frame)
            hits.append(named(Finding(lost.cause, lost.confidence, lost.summary, where, lost.evidence, lost.fix)))
    return hits


def lost_result(scene: Scene, v: ProcessView) -> Lost | None:
    """The main process waits for a pool's results and nobody will hand it the one it waits for: the pool's
    result handler has exited, the executor has no worker and will start none, or every pool worker is idle,
    waiting for work, and one of its workers vanished (the supervisor saw it go) or, for ``inspect``, was
    replaced (inferred)."""
    no_workers = _executor_without_workers(scene, v)
    if no_workers is not None:
        return no_workers
    if not _waits_for_results(v):
        return None
    gone_handler = _no_handler(v) or _workers_die_starting(scene, v)
    if gone_handler is not None:
        return gone_handler
    kids = [c for c in scene.pool_workers(v.pid) if c.info.is_python]
    t = v.main_thread
    if not kids or any(process_state(k).state != "idle" for k in kids) or t is None:
        return None  # a worker still works (or is stuck on its own): not lost work
    if any(x.has_stack and _runs(x, "_handle_tasks") and innermost_user(x.frames) for x in v.threads):
        # the task handler runs the caller's iterable (imap over a slow source): tasks may still come. Any pool's
        # handler counts, and one whose iterable waits on main (a semaphore for backpressure) hides a lost task
        # too: that wait is then judged by the clock, never called lost work on a guess
        return None
    frame = innermost_user(t.frames)
    parents = scene.pool_parents(v.pid)
    gone = [g for g in scene.evidence.vanished if g.ppid in parents]
    ev = [
        f"{v.label()} waits for results at {described(frame)}",
        f"all {len(kids)} pool workers are idle, waiting for work: pids {', '.join(str(k.pid) for k in kids)}",
    ]
    if gone:
        # which of several held the task is not measured (a worker recycled by maxtasksperchild ends with none):
        # one the kernel log names (the OOM killer's) first, else one of them, said so
        went, gone = len(gone), [g for g in gone if g.reason] or gone
        g = gone[-1]
        ev.extend(_vanished_text(x) for x in gone[-3:])
        likely = f", most likely holding a task (of {went} that went, the kernel log names it)" if went > 1 else ""
        who = (
            f"Pool worker pid {g.pid} vanished at {_clock(g.gone_at)}" + (likely or " while holding a task")
            if len(gone) == 1
            else f"{len(gone)} pool workers vanished (pids {', '.join(str(x.pid) for x in gone[-4:])}, the last at "
            f"{_clock(g.gone_at)}); one of them held a task"
        )
        summary = (
            who
            + (f" (a replacement, pid {g.replaced_by}, started then)" if g.replaced_by and len(gone) == 1 else "")
            + f"; {_call(frame)} at {describe(frame)} waits forever for that result."
        )
        fact = (
            f"{'pool worker pid ' + str(g.pid) if len(gone) == 1 else f'{len(gone)} pool workers'} vanished while it "
            "waits for results and every worker is idle: nobody works on the lost task, and Pool never reports it"
        )
        return Lost(frame, fact, summary, tuple(ev), LOST_WORK_FIX, 0.93)
    late = _replacement(kids)
    if late is None:
        return None
    young, oldest = late
    ev.append(
        f"pool worker pid {young.pid} started {young.info.create_time - oldest.info.create_time:.0f} s "
        f"after pid {oldest.pid}: it replaced a worker that ended (an inference: inspect has no history "
        "of the job's processes; `hangwatch run` names the one that went)"
    )
    summary = (
        f"A pool worker most likely vanished while holding a task: pid {young.pid} started later than "
        f"its siblings (a replacement), every worker is idle, and {_call(frame)} at {describe(frame)} "
        "still waits for a result."
    )
    fact = (
        f"every pool worker is idle while it waits for results, and pid {young.pid} replaced a worker that ended "
        "(inferred from start times)"
    )
    return Lost(frame, fact, summary, tuple(ev), LOST_WORK_FIX, 0.8)


def _call(frame: object) -> str:
    code = getattr(frame, "code", None) or ""
    for name in ("starmap", "map_async", "imap_unordered", "imap", "map", "apply_async", "apply"):
        if f".{name}(" in code:
            return f"Pool.{name}"
    return "the pool call"


def _vanished_text(g: VanishedProcess) -> str:
    why = f" ({g.reason})" if g.reason else ""
    repl = f"; pid {g.replaced_by} started as it went (the pool's replacement)" if g.replaced_by else ""
    return (
        f"pid {g.pid} (`{g.cmdline[:80]}`), a child of pid {g.ppid} started at {_clock(g.started_at)}, was seen "
        f"gone at {_clock(g.gone_at)}{why}{repl}"
    )


def _replacement(kids: list[ProcessView]) -> tuple[ProcessView, ProcessView] | None:
    """The youngest worker and the oldest, when the youngest started well after the others."""
    ordered = sorted(kids, key=lambda k: k.info.create_time)
    if len(ordered) < 2 or not ordered[0].info.create_time:
        return None
    oldest, young = ordered[0], ordered[-1]
    second = ordered[-2]
    if young.info.create_time - second.info.create_time < LATE_START_S:
        return None
    return young, oldest


# A worker that spawn starts imports the main script again, as __mp_main__, before it takes a task; the traceback of
# one that died there passes through this frame of multiprocessing's (or of `multiprocess`, its fork in HF datasets).
_RERUNS_MAIN = re.compile(r'File "[^"\n]*multiprocess(?:ing)?/spawn\.py", line \d+, in _fixup_main_from_path\r?\n')
_TOP_LEVEL = re.compile(r'File "([^"<\n][^"\n]*)", line (\d+), in <module>\r?\n(?: +(.+)\n)?')  # a file's, not <string>
# Python's own refusal, in a process still importing the main script, to start another (multiprocessing's
# _check_not_importing_main): the script starts processes at its top level, and every worker that imports it again
# reaches that line too.
_BOOTSTRAPPING = "finished its bootstrapping phase"
# A fork or spawn pool's worker runs the pool's initializer before its first task; one that raises ends the worker, and
# the pool starts another that runs it again, for ever (CPython's gh-87472): its traceback passes through this line.
_INITIALIZER = re.compile(
    r'File "[^"\n]*multiprocess(?:ing)?/pool\.py", line \d+, in worker\r?\n +initializer\(\*initargs\)\r?\n'
)
_CALLED = re.compile(
    r'[ \t]{0,8}File "[^"\n]{1,4096}", line \d{1,9}, in (\w{1,200})'
)  # the first frame after it: the initializer
# Errors of the code itself: the same initializer raises them again in every worker, whatever the job reads or waits
# for (a FileNotFoundError, a CUDA out-of-memory error or "database is locked" may pass once a file or memory is there)
_CODE_ERRORS = frozenset(
    {
        "NameError",
        "UnboundLocalError",
        "AttributeError",
        "TypeError",
        "ImportError",
        "ModuleNotFoundError",
        "SyntaxError",
        "IndentationError",
        "ZeroDivisionError",
        "NotImplementedError",
        "RecursionError",
    }
)
SAME_DEATHS = 3  # a worker's death while importing the script, at the same line: this many times
# What a network or a service says when it may answer the next time (lower case): a top level that fails so may not
# fail again
_MAY_PASS = (
    "connection",
    "timeout",
    "timed out",
    "gaierror",
    "http",
    "url",
    "temporar",
    "unavailable",
    "unreachable",
    "no route",
    "ssl",
    "refused",
    "resolve",
    "name or service",
)


def _deaths_at_start(tail: str) -> tuple[int, list[tuple[str, int, str | None]], bool]:
    """How many tracebacks of the output are of workers that died while importing the main script again, the
    script's top-level line each rose through (file, line, code; the last may be cut short), and whether Python
    said why: the script starts a process at its top level."""
    starts = list(_RERUNS_MAIN.finditer(tail))
    if not starts:
        return 0, [], False
    tops = [t for m in starts if (t := _TOP_LEVEL.search(tail, m.end())) is not None]
    lines = [(t.group(1), int(t.group(2)), t.group(3)) for t in tops]
    return len(starts), lines, _BOOTSTRAPPING in tail[starts[0].end() :]


def _initializer_deaths(tail: str) -> list[tuple[str, Raised]]:
    """The tracebacks of the output that rose from a pool's initializer (multiprocessing's worker runs it before it
    takes a task), each with the initializer's name, what it raised and the job's line that raised it, in order."""
    deaths: list[tuple[str, Raised]] = []
    for m in _INITIALIZER.finditer(tail):
        after = tail[m.end() :]
        ends = [i for i in (after.find("\nTraceback"), after.find("\nProcess ")) if i >= 0]
        body = after[: min(ends) if ends else len(after)]
        called = _CALLED.match(body)
        found = tracebacks(f"{TRACEBACK}\n{body}")
        deaths.extend((called.group(1), r) for r in found[:1] if r.frame is not None and called is not None)
    return deaths


def _in_bootstrap(w: ProcessView, initializer: bool = False) -> bool:
    """A pool worker that has not reached the pool's loop in any sample (no stack read runs multiprocessing's pool.py:
    it still starts, or imports the main script again; with ``initializer``, one in the pool's initializer too), or
    was not read at all (gone before the look, or starting)."""
    return not any(
        f.file.endswith("/pool.py") and not (initializer and "initializer(" in (f.code or ""))
        for t in w.threads
        for stack in t.stacks
        for f in stack
    )


def _thread_pool_worker(t: ThreadView) -> bool:
    """``t`` runs the pool's worker loop itself: the process's pool is a ThreadPool (multiprocessing.dummy)."""
    return any(sg.method(f) == "worker" and f.file.endswith("/pool.py") for stack in t.stacks for f in stack)


def _script(v: ProcessView) -> str | None:
    """The file of the main thread's outermost Python frame: the script the process runs (its top level)."""
    t = v.main_thread
    frames = t.frames if t is not None else ()
    return frames[-1].file if frames and frames[-1].function == "<module>" else None


@frozen
class _Deaths:
    """How a pool's workers die as they start: where, why, in what, the output's fact, and the fix."""

    at: str  # `file.py:12 `code``
    why: str
    during: str
    said: str  # the job's output, in words
    fix: tuple[str, ...]
    initializer: bool = False
    proves: bool = True  # False: an error that what the job reads or waits for may end


def _workers_die_starting(scene: Scene, v: ProcessView) -> Lost | None:
    """The pool's workers die as they start, and each replacement will too. The caller waits for a process pool's
    results (no thread of it runs the pool's worker loop: not a ThreadPool); the job's output holds the tracebacks of
    workers that died importing the caller's own script again (spawn imports it in every worker), with Python's own
    refusal to start a process from a script's top level while it is imported, or the same top-level line three times
    (not an error a network may pass); or of workers that died in the pool's initializer, the last three at the same
    line with the same error of the code itself (a NameError, a TypeError: not one that what the job reads or waits
    for could end); a worker of it ended during the look (the deaths go on now: not a log's earlier run); and no
    worker was seen past that start (with an initializer: none read is older than the look). Every replacement runs
    the same code, so no worker will take a task."""
    t = v.main_thread
    if t is None or any(_thread_pool_worker(x) for x in v.threads):
        return None
    tail = job_log([p.output_tail for p in scene.evidence.processes])
    dies = _dies_importing(tail, _script(v)) or _dies_initializing(tail)
    if dies is None:
        return None
    parents = scene.pool_parents(v.pid)
    kids = scene.pool_workers(v.pid)
    ended = [k for k in kids if k.ended] + [
        g for g in scene.evidence.vanished if g.ppid in parents and g.gone_at >= scene.evidence.started_at
    ]
    starting = all(
        _in_bootstrap(k, dies.initializer)
        and (not dies.initializer or k.has_stacks or k.info.create_time >= scene.evidence.started_at - 1.0)
        for k in kids
    )
    if not ended or not starting:
        return None  # no worker died during the look, or one got past its start (or lived unread): tasks may be taken
    frame = innermost_user(t.frames)
    read = [k for k in kids if any(x.has_stack for x in k.threads)]
    if not dies.proves:  # named, for the clock to decide
        summary = (
            f"{_call(frame)} at {describe(frame)} waits while every worker the pool starts dies as it starts, "
            f"{dies.during}, at {dies.at}: {dies.why}. The pool replaces each one, for ever; an error of this kind may "
            "pass once what the initializer reads is there, so no proof: the clock decides."
        )
    else:
        summary = (
            f"{_call(frame)} at {describe(frame)} waits forever: every worker the pool starts dies as it starts, "
            f"{dies.during}, at {dies.at}: {dies.why}. The pool replaces it with one that dies the same way."
        )
    return Lost(
        frame,
        f"each pool worker dies {dies.during}, at {dies.at} ({dies.why}), one of them during the look; every "
        "replacement runs the same code: no worker will take a task",
        summary,
        (
            f"{v.label()} waits for results at {described(frame)}",
            f"the job's output: {dies.said}",
            f"{len(ended)} pool worker(s) ended during the look; of the {len(kids)} alive, {len(read)} read, none "
            "past its start (in the pool's own loop)",
        ),
        dies.fix,
        0.92 if dies.proves else 0.6,
        Cause.CHILD_WAIT,
        dies.proves,
    )


def _dies_importing(tail: str, script: str | None) -> _Deaths | None:
    """How workers die importing ``script`` again (spawn); None where they do not."""
    count, tops, refused = _deaths_at_start(tail)
    if script is None or count == 0 or not tops or tops[-1][0] != script:
        return None  # no death importing this process's own script
    after = tail[tail.find("_fixup_main_from_path") :].lower()
    if not refused and (
        count < SAME_DEATHS or len({(f, n) for f, n, _ in tops}) != 1 or any(w in after for w in _MAY_PASS)
    ):
        return None  # deaths at different lines, or of an error that may pass: not one death that comes again
    _, line, code = tops[-1]
    at = f"{script.rsplit('/', 1)[-1]}:{line}" + (f" `{code.strip()}`" if code else "")
    why = (
        "Python refuses to start a process from a script's top level while a worker imports it (\"An attempt has "
        'been made to start a new process before the current process has finished its bootstrapping phase")'
        if refused
        else f"the job's output holds {count} tracebacks of workers that died there"
    )
    said = (
        f"{count} traceback(s) of a worker that died importing the script again (multiprocessing's "
        f"_fixup_main_from_path), the last at its top-level line {at}"
    )
    return _Deaths(at, why, "importing the main script again (spawn runs it in every worker)", said, MAIN_GUARD_FIX)


def _dies_initializing(tail: str) -> _Deaths | None:
    """How workers die in the pool's initializer: the last SAME_DEATHS deaths there all the same error of the code
    itself at the same line; None otherwise."""
    deaths = _initializer_deaths(tail)[-SAME_DEATHS:]
    if len(deaths) < SAME_DEATHS:
        return None
    same = {(name, d.frame.file, d.frame.line, d.exception) for name, d in deaths if d.frame is not None}
    name, last = deaths[-1]
    if len(same) != 1 or last.frame is None:
        return None  # different deaths: not one death that comes again
    # an error of the code itself proves it; another (a file, a device) what the job reads or waits for may end
    proves = last.exception.split(":", 1)[0].rsplit(".", 1)[-1] in _CODE_ERRORS
    f = last.frame
    at = f"{f.file.rsplit('/', 1)[-1]}:{f.line}" + (f" `{f.code.strip()}`" if f.code else "")
    why = f"the last {len(deaths)} tracebacks of workers all raised {last.exception[:200]} there"
    said = f"{len(deaths)} tracebacks through the pool's initializer({name}), each {last.text()}"
    return _Deaths(at, why, f"in the pool's initializer, {name}()", said, INITIALIZER_FIX, True, proves)
