"""What each process and each thread of the job is doing: one reading, from measured facts only.

The rules, the wait-for graph and the engine ask this module whether a process or a thread works, sleeps, waits
for work or is stuck; none of them decides it on its own. A state is one of:

- ``gone`` (it exited during the look), ``stopped`` (SIGSTOP, Ctrl-Z, a tracer stopped itself) in every sample;
  ``traced``: in a tracing stop throughout, held by a tracer that works or waits for its user (a debugger);
- ``spinning``: the same user function at full CPU in every sample, and its locals show it gets nowhere (or none
  could be read and the stack stays on one line); proof of a hang when a counter counts nothing or the loop's
  condition cannot change;
- ``working``: its locals advance, bytes move, its output grows, a compiler runs, it is in a library's own
  bounded ending (torch joining its DataLoader workers) (proof of work), its stack moves at CPU, or it sits at
  full CPU inside one call (no proof: a native spin looks the same);
- ``looping``: it sleeps and wakes in a loop with no way out, and no other thread could end the process (proof);
  or a Timer of an exit whose timers re-arm with no way out in their source (no proof: no verdict of its own);
- ``long_sleep``: asleep on a timer that ends past the job's bounds (proof); ``asleep``: a timer will wake it;
- ``wakes``: it woke again and again (a sleep, poll or retry loop), or moved data; ``idle``: waits for work;
- ``blocked``: in one call for the whole window, at no CPU, never woken; ``brief``: seen too briefly to say that it
  stays where it is; ``unknown``: nothing above was measured. ``VERDICTS`` says what waiting on something in each
  state is; the graph's chain ends and the verdict stage (``verdict.judged``) take it from there.
"""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.diagnose import proof, timers
from hangwatch.diagnose.childloop import child_loop
from hangwatch.diagnose.deadline import ends_by_clock, retried_wait
from hangwatch.diagnose.loops import LoopMotion, loop_motion, never_exits, one_long_call
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.views import (
    IDLE_CPU_PERCENT,
    ProcessView,
    ThreadView,
    bound_text,
    bounded_ending,
    describe,
    duration_text,
    exit_words,
    innermost_explaining,
    innermost_user,
    moves_for_its_process,
    polls_with_timeout,
    size_text,
)
from hangwatch.records.evidence import CLOSED_KINDS, MP_VALUE, READ_KINDS, THREADING_EVENT, UNREAD, LockHolder, Role
from hangwatch.records.incident import Verdict
from hangwatch.records.values import frozen


@frozen
class Measured:
    """A process's or a thread's state, the measured fact behind it, and whether that fact proves work (locals that
    advance, bytes moving, output growing) or a hang (a spin getting nowhere, a loop with no way out, a long timer)."""

    state: str
    fact: str
    proves_work: bool = False
    proves_hang: bool = False
    motion: LoopMotion | None = None  # what the locals of a running loop said, where they were read


# What waiting on something in each state is: (the verdict, whether the state itself is proof of a hang). A
# state with proof (``Measured.proves_hang``) makes a hung one proven; ``None``: the state says nothing either way.
VERDICTS: dict[str, tuple[Verdict | None, bool]] = {
    **dict.fromkeys(("gone", "stopped", "long_sleep"), (Verdict.HUNG, True)),
    **dict.fromkeys(("blocked", "spinning", "looping", "idle"), (Verdict.HUNG, False)),
    **dict.fromkeys(("working", "traced", "spin_waits", "asleep", "wakes"), (Verdict.SLOW, False)),
    **dict.fromkeys(("ended", "started"), (Verdict.SLOW, False)),  # a thread's end or start in the look: a change
    **dict.fromkeys(("brief", "unknown"), (None, False)),
}
ALIVE = frozenset(s for s, (verdict, _) in VERDICTS.items() if verdict == Verdict.SLOW)
COMPILER_CPU_PERCENT = 5.0  # a compiler process (g++, an inductor worker) above this works
TIMER_WORDS = {"sigwait": ("waits for a signal", "ends within"), "read": ("reads a timerfd", "fires in")}


def process_state(v: ProcessView) -> Measured:
    """What a process was measured doing: its main thread's state, with what the process shows (bytes, output)."""
    return thread_state(v, v.main_thread)


def holder_process_state(v: ProcessView) -> Measured:
    """What a process another waits on can still do: its main thread's state, else what another thread of it could
    (``_side_alive``), one that works with proof first. A rank's: its main thread's."""
    m = process_state(v)
    if m.state in ALIVE or v.info.rank is not None:
        return m
    found = [x for o in v.threads if o is not v.main_thread and (x := _side_alive(v, o, m)) is not None]
    return next((x for x in found if x.proves_work), found[0] if found else m)


def _side_alive(v: ProcessView, o: ThreadView, m: Measured) -> Measured | None:
    """What side thread ``o`` (Python, not parked, not machinery) could still do: work or wake (a service answering
    when its uploader is done), sleep on a timer within the bounds (a thread that feeds a child's stdin a line every
    2 s: it runs again, and may write what the child reads; it was "blocked", and the clock ended the job), or be a
    Timer due within the bounds that may be a one-shot (``timers.one_shot``); None where it can do nothing."""
    if not proof.may_release(o):
        return None
    other = thread_state(v, o)
    # (one that only wakes: where the process used CPU (a heartbeat's cost none), or its loop ends by the clock)
    clock = next((r.loop for r in v.locals_of(o.tid) if ends_by_clock(r.loop, dict(r.values))), None)
    if other.state == "asleep" and timers.one_shot(v, o):  # (a Timer that runs its function once, then)
        return Measured("asleep", f"its thread '{o.name}', a threading.Timer, is {other.fact}")
    # a thread asleep in its own code runs again within the bounds, and may write, release or send what the process
    # holds; a Timer that may not fire once (a heartbeat that re-arms itself, read from the source) is no way out
    if other.state == "asleep" and not any(map(proof.timer_run, o.frames)):
        return Measured("asleep", f"its thread '{o.name}' is {other.fact} (its main thread: {m.fact})")
    if other.state == "working" or (other.state == "wakes" and (runs(v) is not None or clock)):
        does = "works" if other.state == "working" else f"waits in `{clock}`" if clock else "wakes again and again"
        fact = f"its thread '{o.name}' {does}: {other.fact} (its main thread: {m.fact})"
        return Measured(other.state, fact, proves_work=other.proves_work)
    return None


def thread_state(v: ProcessView, t: ThreadView | None) -> Measured:
    """What thread ``t`` of ``v`` was measured doing. The process's own facts (bytes moved, output grown, read
    and write calls) count for its main thread, and for another thread only where it is the one that could have
    moved them (``moves_for_its_process``): they say nothing else of which thread moved them."""
    if v.ended:
        return Measured("gone", v.ended)
    if v.role == Role.DATALOADER_WORKER and v.state.startswith("Z"):
        # (a zombie throughout is not gone for every process: a crashed rank may be the one its peers wait for)
        status = v.ev.samples[-1].exit_status
        if status == 0:  # torch lets a worker whose IterableDataset shard ended go, and joins it at the epoch's end
            return Measured("idle", f"{v.label()} has exited with status 0 (its data ended): it holds no batch")
        if status is not None:
            return Measured(
                "gone",
                f"{v.label()} has exited ({exit_words(status)}; its parent has not read its status yet): a DataLoader "
                "waiting for a batch checks its workers each time its wait times out (every 5 s by default) and "
                "raises for a dead one",
            )
    if v.stopped:
        return stopped_state(v)
    ending = bounded_ending(t)
    if ending is not None:
        return Measured("working", f"{v.label()} {ending}: it ends by itself", proves_work=True)
    main = t is not None and t is v.main_thread
    owns = main or (t is not None and moves_for_its_process(v, t))
    if main and compiler_at_work(v):
        # a compiler (g++, an inductor worker) at CPU: its output is the work, read when it ends (runnable, with its
        # CPU not measured yet: working, without proof)
        used = v.cpu_text() if v.cpu_percent is not None else f"state {v.state}"
        proven = (v.cpu_percent or 0.0) > COMPILER_CPU_PERCENT
        return Measured("working", f"{v.label()}, a compiler, used {used}", proves_work=proven)
    if t is not None and t.spinning:  # the same function at full CPU: do its locals advance?
        return running_state(v, t)
    if owns and v.work is not None:
        return Measured("working", v.work, proves_work=True)
    if t is None:
        return Measured("unknown", f"{v.label()}: state {v.state}, {v.cpu_text()}")
    frame = t.user_frame
    # A sleep written on its line counts only where the kernel does not say otherwise: in D (uninterruptible) the
    # thread waits on a device or a filesystem, never on a timer (a sleep is interruptible), whatever the line says.
    # (in a sleep's call at the newest sample, or in one resumed: ``sleep_left``)
    asleep = (
        t.last.syscall in sg.SLEEP_SYSCALLS
        or t.sleep_left is not None
        or bool(
            t.last.state != "D"
            and t.frames
            and sg.SLEEP_LINE.search((innermost_user(t.frames) or t.frames[0]).code or "")
        )
    )
    wakes = t.woke_often or (owns and v.moved_data)
    rearmed = timers.rearmed_timers(v, t)  # a Timer of an exit whose timers re-arm, with nothing else at work
    if rearmed is not None and v.delta("syscalls") is not None and not v.moved_data and not runs(v):
        return Measured("looping", f"{rearmed}; nothing else of the process ran or moved data")
    if not main and t in threads_ended(v):  # (a timer that fired, a task done: what joins it goes on)
        return Measured("ended", f"thread '{t.name}' of {v.label()} ended during the look: it waits on nothing now")
    if not main and t in threads_started(v):
        return Measured("started", f"thread '{t.name}' of {v.label()} started during the look: a change, not a wait")
    # a Python wait with a timeout (Event.wait(600), a Timer, sigtimedwait, a read of a timerfd) that ends within the
    # bounds, whoever else might end it sooner (a native one, gloo's wait for its peers, is judged as its caller is)
    sync = (t.last.syscall == "futex" and proof.sync_wait(t) is not None) or t.last.fd_target == sg.TIMERFD
    timed = t.last.wait_max if t.last.syscall == "sigwait" else t.last.wakes_in if sync else None
    if timed is not None and timed >= v.timer_bound_s:
        timed = None  # past the bounds: it waits as if it had no timeout (ThreadView.waits_forever)
    if asleep or wakes or timed is not None:  # (a loop of timed waits with no way out: `while not stop.wait(1)`)
        # (or its wakes are only its wait's timeouts, retried: it waits as if it had none, ``retries``)
        endless = _endless(v, t) or _retrying(v, t)
        if endless:
            return endless
    if t.busy and not asleep and (busy := _at_full_cpu(t)) is not None:
        return busy
    if asleep and not t.woke_often:
        at = frame or (t.frames[0] if t.frames else None)
        left = t.sleep_left  # (a futex wait's timer may be cut short: a sleep's only)
        timer = left if left is not None else sg.sleep_timer(at.code if at is not None else None)
        # The kernel's timer says what is left; the one written on the line says so only of a sleep seen long
        # enough (one sample may catch the end of it).
        if timer is not None and timer >= v.timer_bound_s and (left is not None or t.measured):
            how = "whose end the kernel shows" if left is not None else "written on its line"
            return Measured(
                "long_sleep",
                f"asleep at {describe(at)} on a timer ({how}) that ends in {duration_text(timer)}: "
                + bound_text(v.timer_bound_s),
                proves_hang=True,
            )
        return Measured("asleep", f"in a timed sleep at {describe(frame)}")
    if wakes:
        moved = f" and made {v.delta('syscalls') or 0} read/write calls" if owns and v.moved_data else ""
        return Measured("wakes", f"woke {t.wakeups} times{moved} in {t.duration_s:.1f} s")
    if t.stack_changed and (t.cpu_percent or 0.0) > IDLE_CPU_PERCENT:
        return Measured("working", f"{v.cpu_text()} with its stack moving in {describe(frame)}")
    if t.has_stack and sg.waits_for_work(t.frames) and t.idle_throughout:
        return Measured("idle", f"waits for work of its own at {describe(frame)}")
    polls = polls_with_timeout(v, t) if main else None
    if polls is not None:
        return _endless(v, t) or Measured("wakes", polls)
    if timed is not None:
        place, ends = describe(frame or proof.waits_at(t)), TIMER_WORDS.get(t.last.syscall or "", ("", "ends in"))[1]
        return Measured("asleep", f"in a timed wait at {place} whose timeout {ends} {duration_text(timed)}")
    # (its one thread in a read at every sample, whose reads returned bytes, is not blocked)
    if (fed := _fed(v, t)) or (t.has_stack and t.blocked):
        return (
            Measured("working", fed)
            if fed
            else Measured(
                "blocked",
                f"blocked at {v.cpu_text()} for the whole window in "
                f"{describe(frame or innermost_explaining(t.frames))}{_kernel_wait(t)}",  # (`python -c`: `<string>`)
            )
        )
    if (
        not t.has_stack
        and t.measured  # one sample says where it is, never that it stayed there
        and t.last.state in ("S", "D")
        and (v.cpu_percent or 0.0) <= IDLE_CPU_PERCENT
        and (t.wakeups or 0) == 0
    ):  # a non-Python process: the kernel's view only
        return Measured("blocked", f"blocked at {v.cpu_text()} for the whole window{_kernel_wait(t)}")
    if not t.measured:  # one sample, or a timed wait seen briefly (a capture cut short on a loaded machine)
        n = len(t.samples)
        return Measured(
            "brief",
            f"{'started during the look, ' if not t.whole else ''}seen in {n} sample{'s' if n != 1 else ''} over "
            f"{t.duration_s:.1f} s: too briefly to say that it stays there",
        )
    return Measured("unknown", f"{v.label()}: state {v.state}, {v.cpu_text()}")


def _fed(v: ProcessView, t: ThreadView) -> str | None:
    """A read that returned bytes in the window, in words: the process's one thread was seen in a read in every sample
    and woke between them, and the process read bytes meanwhile (a read a stop interrupts returns none: its bytes came
    from a writer). A child fed a line every 2 s by its parent's thread is so, not blocked."""
    got = v.delta("rchar") or 0
    if len(v.threads) != 1 or not t.wakeups or got <= 0 or not t.measured:
        return None
    if not all(s.syscall in sg.READ_SYSCALLS for s in t.samples):
        return None
    woke = f"{t.wakeups} wake-up{'s' if t.wakeups != 1 else ''}"
    return f"it read {size_text(got)} in {t.duration_s:.1f} s, its one thread in a read at every sample ({woke})"


def retries(v: ProcessView, t: ThreadView) -> str | None:
    """The timed wait ``t`` retries in a loop whose only way out is that wait succeeding, as written
    (``deadline.retried_wait``: ``while not lock.acquire(timeout=1): pass``), where the thread is in it now and it is a
    wait on one of the standard library's thread primitives (a lock, an event, a condition, a queue, a join: its
    frames say so, ``proof.sync_wait``; never an HTTP client's `get`, a server's to answer); None otherwise. Its
    wake-ups are that wait's timeouts, not work: nothing else of it runs until the wait succeeds."""
    user = t.user_frame
    if user is None or proof.sync_wait(t) is None:
        return None
    for r in v.locals_of(t.tid):
        if r.loop_line is None or (r.file, r.line) != (user.file, user.line):
            continue
        said = retried_wait(r.body, r.line - r.loop_line + 1)
        if said is not None:
            return said
    return None


def _retrying(v: ProcessView, t: ThreadView) -> Measured | None:
    wait = retries(v, t)
    said = f"retries `{wait}` at {describe(t.user_frame)}, its loop's only way out: it waits as if with no timeout"
    return Measured("blocked", said) if wait is not None else None


def _at_full_cpu(t: ThreadView) -> Measured | None:
    """A thread at full CPU out of a sleep: working, without proof, where its stack moves (its wake-ups are the GIL's
    hand-offs, not a poll's) or where it sits inside one call that releases the GIL in most samples (native code; a
    native spin looks the same). One holding the GIL is ``spinning`` where its innermost frame is the user's."""
    cpu, at = f"{t.cpu_percent or 0:.0f}% CPU", describe(t.user_frame)
    if t.stack_changed:
        return Measured("working", f"{cpu} with its stack moving in {at}")
    gil = sum(1 for x in t.samples if x.owns_gil)
    if not one_long_call(t) or gil * 2 >= len(t.samples):  # (Python holding the GIL: a library's own spin, maybe)
        return None
    said = f"the same stack in all {len(t.stacks)} samples, holding the GIL in {gil} of {len(t.samples)}"
    return Measured("working", f"{cpu} inside one call that releases the GIL at {at}, {said}")


def stopped_state(v: ProcessView) -> Measured:
    """A process stopped in every sample: stopped (proof), unless a tracer holds it in a tracing stop (a debugger a
    person is at, strace): then it is the tracer's to continue (``traced``, slow), unless the tracer is stopped too or
    waits in wait4() for its state to change (a signal stopped it: strace keeps such a stop until SIGCONT): proof."""
    h = v.ev.tracer
    said = f"{v.label()} is in state {v.state} (stopped) in all {len(v.ev.samples)} samples over {v.duration_s:.0f} s"
    if h is None:
        return Measured("stopped", f"{said}: it runs again only when someone continues it")
    held, said = holder_state(h), f"{said}, held by its tracer pid {h.pid} (`{h.cmdline[:80]}`), which"
    if held == "stopped":
        return Measured("stopped", f"{said} is stopped too: neither runs again until someone continues it")
    if held == "blocked" and h.call in ("wait4", "waitid") and not h.waits_for:
        return Measured(
            "stopped",
            f"{said} waits in {h.call}() for its state to change: a signal stopped it (SIGSTOP, "
            "Ctrl-Z), and it runs again only when someone continues it",
        )
    tty = f", its standard input a terminal ({h.stdin})" if (h.stdin or "").startswith(sg.TTY_PREFIXES) else ""
    does = {"working": "works", "asleep": "is asleep on a timer", "gone": "has exited", "unknown": "was not read"}.get(
        held, f"is {held}" + (f" in {h.call}()" if h.call else "")
    )
    return Measured("traced", f"{said} {does}{tty}: it runs again when its tracer continues it or detaches")


def threads_ended(v: ProcessView) -> tuple[ThreadView, ...]:
    """The threads of ``v`` gone from the newest sample, the process alive in it: each ended during the look (a thread
    leaves /proc/PID/task only when it exits), a change. None where that sample read fewer threads than the kernel
    counted (one unreadable, or born or ended as it was read), or where the user's code re-arms a Timer with no way
    out (``timers.rearm_site``), whose ends are the turns of that loop."""
    newest = v.ev.samples[-1]
    last = {t.tid for t in newest.threads}
    if v.ended or v.pid not in last or newest.num_threads != len(last) or timers.rearm_site(v) is not None:
        return ()
    return tuple(t for t in v.threads if t.tid not in last)


def threads_started(v: ProcessView) -> tuple[ThreadView, ...]:
    """The threads of ``v`` started during the look (absent from a first sample that read all): a change, as an end."""
    first = v.ev.samples[0] if v.ev.samples else None
    if first is None or first.num_threads != len(first.threads) or timers.rearm_site(v) is not None:
        return ()
    return tuple(t for t in v.threads if not t.whole)


def compiler_at_work(v: ProcessView) -> bool:
    """A compiler process (g++, an inductor worker) at CPU, or runnable with its CPU not measured yet."""
    return v.role == Role.COMPILE_WORKER and ((v.cpu_percent or 0.0) > COMPILER_CPU_PERCENT or v.state == "R")


def _kernel_wait(t: ThreadView) -> str:
    """The kernel's wait in parentheses, where it was read (its call, or that it has no timeout); else nothing."""
    return f" ({t.wait_text})" if t.last.syscall or t.last.timeout is False else ""


def running_state(v: ProcessView, t: ThreadView) -> Measured:
    """A thread at full CPU in one function (``ThreadView.spinning``): working when its locals advance, when it sits
    inside one long call (``one_long_call``), or, with no locals to read, when its stack moves; spinning when they
    show it gets nowhere (proven when a counter counts nothing or its condition cannot change: a loop that counts
    iterates, so no long call explains it)."""
    # a threading.Timer of another thread may end the loop, whatever it reads (``_thread.interrupt_main()``)
    timer = any(o.tid != t.tid and any(proof.timer_run(f) for f in o.frames) for o in v.threads)
    motion = loop_motion(v.locals_of(t.tid), v.runs_alone(t), private=not timer)
    at = describe(t.user_frame)
    if motion is not None and motion.advanced:
        return Measured(
            "working",
            f"{v.cpu_text()} in {at}; its loop advances: {motion.evidence}",
            proves_work=True,
            motion=motion,
        )
    if (motion is None or not motion.counting) and one_long_call(t):
        return Measured(
            "working",
            f"one long call at {at}: the same stack on the same line in all {len(t.stacks)} samples at "
            f"{t.cpu_percent or 0:.0f}% CPU, holding the GIL",
            proves_work=True,
            motion=motion,
        )
    reads, seen = v.locals_of(t.tid), f"{motion.evidence}; " if motion is not None else ""
    if (motion is None or not motion.counting) and reads and ends_by_clock(reads[-1].loop, dict(reads[-1].values)):
        deadline = f"its condition `{reads[-1].loop}` reads the clock: it ends by itself as time passes"
        return Measured("spin_waits", f"{v.cpu_text()} in {at}; {seen}{deadline}", motion=motion)
    if proof.caught(v, proof.SIGALRM):  # a timeout's handler (signal.alarm, setitimer) may raise out of any loop
        return Measured("spin_waits", f"{v.cpu_text()} in {at}; {seen}{proof.TIMER_WORDS}, whose handler may end it")
    if motion is not None:
        awaited = None if motion.counting else _alive_user_thread(v, t)
        if awaited is not None:  # (its locals show it gets nowhere, but that thread may change what it reads)
            return Measured("spin_waits", f"{v.cpu_text()} in {at}; {motion.evidence}: {awaited}", motion=motion)
        return Measured(
            "spinning", f"{v.cpu_text()} in {at}; {motion.evidence}", proves_hang=motion.counting, motion=motion
        )
    if v.stack_moved(t):  # a loop whose stack moves between lines at CPU works (a module's top level: no locals)
        lines = v.lines_of(t)
        between = f"lines {', '.join(str(n) for n in lines[:4])} of" if len(lines) > 1 else "frames in"
        return Measured(
            "working",
            f"{v.cpu_text()} for {v.duration_s:.1f} s with its stack moving between {between} {at} (no locals to read)",
            proves_work=True,
        )
    return Measured("spinning", f"{v.cpu_text()} on the same line ({at}) in every sample")


def _alive_user_thread(v: ProcessView, t: ThreadView) -> str | None:
    """Another thread of ``v`` running the user's code (only such a thread reaches what the user's loop reads) measured
    working, waking or asleep, in words; None where none is. A spin counts where its locals advance (read here)."""
    for o in v.threads:
        if o.tid == t.tid or not proof.may_release(o) or not any(sg.is_user(f) for f in o.frames):
            continue
        if o.spinning:
            motion = loop_motion(v.locals_of(o.tid), v.runs_alone(o))
            fact = motion.evidence if motion is not None and motion.advanced else None
        else:
            other = thread_state(v, o)
            fact = other.fact if other.state in ("working", "wakes", "asleep") else None
        if fact is not None:
            return f"another thread of the user's code, {o.name!r}, is alive ({fact})"
    return None


def _endless(v: ProcessView, t: ThreadView) -> Measured | None:
    """A thread that sleeps and wakes in a loop whose source has no way out, with no other thread that runs Python
    and could end the process: it never ends (proof); one whose only way out is an event being set, only where the
    event is the process's own and nothing else of it can set it (``_only_its_own``). Main in a loop that only sleeps
    until its child ends waits on that child (blocked: the graph follows it)."""
    why = next((w for r in v.locals_of(t.tid) if (w := never_exits(r.body, _only_its_own(v, t, r.flag), r.flag))), None)
    if why is None and t is v.main_thread and child_loop(v) is not None:  # (the graph's edge to that child)
        return Measured("blocked", f"in a loop that only sleeps until its child ends, at {describe(t.user_frame)}")
    if why is None:
        return None
    if proof.others_may_release(v, t.tid):  # (another thread runs Python that could end the process)
        return None
    alarm = t is v.main_thread and proof.alarmed(v)  # (a timeout's handler may raise out of it)
    return Measured(
        "looping",
        f"in {describe(t.user_frame)}: {why}; no other thread of it runs Python that could end the process"
        + (f"; but {alarm}" if alarm else ""),
        proves_hang=not alarm,
    )


def _only_its_own(v: ProcessView, t: ThreadView, flag: str | None = None) -> bool:
    """Whether only a thread of ``v`` could end ``t``'s wait on an event, and none can:
    - ``t`` is not the main thread, and ``v``'s signal handlers were read and none may set the event (``HANDLED``: a
      handler, such as a SIGTERM handler that sets a stop event, runs on the main thread, whatever it waits in);
    - the event is the process's own, and no futex ``t`` was read waiting on is shared with another process (a
      multiprocessing event's: another process may set it): at least one private futex was read, its last call one;
      or, for a thread that sleeps between reads of its flag (the kernel sees no futex), the loop's file binds that
      flag only to ``threading.Event()`` (``flag``, read by capture/flags.py) and the kernel saw it wake (a loop);
    - every other thread of ``v``, native ones too, is parked in a futex of its own (the kernel says nothing wakes
      it: a thread in ``wait4`` or a read runs again when its child or its data comes, and one in ``pause()`` when
      a signal does, and either may set the event). A multiprocessing Value's number: ``proof.shares_with_none``."""
    if flag == MP_VALUE:
        return proof.shares_with_none(v, t)
    if t is v.main_thread or proof.handlers_may_run(v):
        return False
    read = [s for s in t.samples if s.syscall == "futex" and s.futex is not None]
    if any(s.shared_futex for s in read):
        return False
    private = bool(read) and t.last.syscall == "futex"
    written = flag == THREADING_EVENT and (t.wakeups or 0) > 0
    return (private or written) and all(o.parked and proof.private_futex(o) for o in v.threads if o.tid != t.tid)


def self_held_alive(v: ProcessView) -> str | None:
    """A thread of ``v`` waits on a pipe or socket whose other end only ``v`` itself holds, and another thread of
    it is alive (it wakes, sleeps on a timer within the bounds, or runs): that thread may take or give the bytes
    (an upload to a reader thread of its own), so the wait can end. In words, or None."""
    for w in v.ev.waits:
        if w.tid != v.pid and w.kind in READ_KINDS:
            continue  # a side thread's read (followed only where main waits on that thread: own.py)
        if w.kind not in CLOSED_KINDS or w.holders or "the waiter itself" not in (w.note or ""):
            continue
        for t in v.threads:
            if t.tid == w.tid or not t.has_stack:
                continue
            timer = t.last.wakes_in
            napping = t.last.syscall in sg.SLEEP_SYSCALLS and (timer is None or timer < v.timer_bound_s)
            if t.woke_often or t.busy or napping:
                how = f"woke {t.wakeups} times" if t.woke_often else "runs" if t.busy else "asleep on a timer"
                return (
                    f"only {v.label()} holds {'' if w.kind == 'eventfd' else 'the other end of '}{w.path}, and its "
                    f"thread '{t.name}' is alive "
                    f"({how} at {describe(t.user_frame)}): it may still take or give the bytes"
                )
    return None


WORKING_CPU_PERCENT = 20.0  # a holder outside the views above this (or moving bytes) works, and may release the lock
WORKING_BYTES = 64 * 1024
HOLDER_ORDER = ("working", "asleep", "unknown", "blocked", "stopped", "gone")  # which of several holders decides


def holder_state(h: LockHolder, children: bool = True) -> str:
    """``gone``, ``stopped``, ``working``, ``asleep`` or ``blocked``, from what was measured; ``unknown`` for another
    user's process the agent's watch does not read. Blocked waiting for its children (`flock FILE python train.py`),
    it is as alive as the liveliest of them; ``children`` False: its own state (the graph's node: edges go on)."""
    if h.state == UNREAD:
        return "unknown"
    if h.state is None or h.state == "Z":
        return "gone"
    if h.state in ("T", "t"):
        return "stopped"
    if (h.cpu_percent or 0.0) > WORKING_CPU_PERCENT or (h.moved_bytes or 0) >= WORKING_BYTES:
        return "working"
    top = h.frames[0] if h.frames else None
    if h.sleeping or h.wakes_in is not None or (top is not None and "sleep(" in (top.code or "")):
        return "asleep"
    if (h.cpu_percent or 0.0) > IDLE_CPU_PERCENT:
        return "working"
    kid = min((holder_state(k) for k in h.waits_for), key=HOLDER_ORDER.index) if children and h.waits_for else None
    return kid if kid in ("working", "asleep") else "blocked"


def long_timer(h: LockHolder, bound_s: float) -> str | None:
    """A holder asleep on a timer ending past ``bound_s`` (the kernel's, else its line's), in words; else None."""
    top = h.frames[0] if h.frames else None
    timer = h.wakes_in if h.wakes_in is not None else sg.sleep_timer(top.code if top is not None else None)
    if holder_state(h) != "asleep" or timer is None or timer < bound_s:
        return None
    return f"asleep at {describe(top)} on a timer that ends in {duration_text(timer)}: {bound_text(bound_s)}"


def progressing(scene: Scene) -> str | None:
    """The job's progress in words (its output grows, main computes); with no cause named, ``progressing``."""
    for v in scene.views:
        if v.stdout_grew:
            return f"{v.label()} wrote output"
        fact = computes(v)
        if fact is not None:
            return fact
    return None


def computes(v: ProcessView) -> str | None:
    """Main (a rank) computes, in words: its main thread's stack moves and it uses CPU (moving bytes is no compute),
    unless its state proves it gets nowhere (a spin whose loop cannot end: its stack moves within the loop)."""
    t = v.main_thread
    if v.role not in (Role.MAIN, Role.RANK) or t is None or not t.stack_changed or not runs(v):
        return None
    endless = t.spinning and running_state(v, t).proves_hang
    return None if endless else f"{v.label()} computes at {v.cpu_text()} with its stack moving"


def still(v: ProcessView) -> bool:
    """Nothing of ``v`` ran or moved data in the look, on any thread: no CPU, no read or write calls, none of its
    threads at CPU or waking (a feeder thread copying a batch into shared memory, a pin-memory thread pinning one)."""
    return (
        not v.ended
        and (v.cpu_percent or 0.0) <= IDLE_CPU_PERCENT
        and not v.moved_data
        and not any(x.busy or (x.woke_often and retries(v, x) is None) for x in v.threads)
    )


def runs(v: ProcessView) -> str | None:
    """The process used CPU over the look (alive by itself, whatever else was read), in words; else None."""
    return f"{v.label()} used {v.cpu_text()}" if (v.cpu_percent or 0.0) > IDLE_CPU_PERCENT else None


def moving(scene: Scene, besides: int | None = None) -> str | None:
    """What in the job moves, or will by itself (a timer within the job's bounds), in words; None when none does
    (``besides``: a process not asked about). The one answer to "does anything of this job move?"."""
    for v in scene.views:  # every process, whatever its role: a wget child counts as much as main
        if v.pid == besides:
            continue
        if v.ended:  # an ending is a change: the next look sees what it leaves
            return v.ended
        # so is a thread's end or start, as its wake-ups are, or a Timer's firing (it runs its function, then ends)
        for how, changed in (("ended", threads_ended(v)), ("started", threads_started(v)), ("fired", timers.fired(v))):
            if changed and v.role != Role.LAUNCHER:
                names, n = ", ".join(repr(t.name) for t in changed[:3]), len(changed)
                kind = "threading.Timer" if how == "fired" else "thread"
                return f"{n} {kind}{'s' if n > 1 else ''} of {v.label()} {how} during the look ({names})"
        used = runs(v)
        if used is not None:
            return used
        if v.work is not None:
            return v.work
        if v.moved_data or (v.delta("write_bytes") or 0) + (v.delta("read_bytes") or 0) > 0:
            return f"{v.label()} moved data"
        woke = any(t.woke_often and retries(v, t) is None for t in v.threads if t.has_stack)  # (not a retried wait)
        if v.stdout_grew or (v.role != Role.LAUNCHER and woke):
            return f"{v.label()} woke up or wrote output"  # torchrun's agent wakes to poll its ranks: not work
        # an event loop's own poll with a timer, on any thread (a loop run by a thread of its own, whose coroutine
        # another thread awaits through run_coroutine_threadsafe)
        for t in v.threads if v.role != Role.LAUNCHER else ():
            polls = polls_with_timeout(v, t)
            if polls is not None:
                return f"{v.label()}{'' if t is v.main_thread else f' thread {t.name!r}'} {polls}"
        for t in v.threads if v.role != Role.LAUNCHER else ():  # torchrun's agent sleeps between its polls
            top = t.frames[0] if t.frames else None  # time.sleep is C: its caller's line, in any file
            # the kernel's timer of a sleep: Python or native (`sleep 20`), in the newest sample that caught it asleep
            asleep = t.waiting if t.samples else None
            kept = asleep is not None and (asleep.syscall in sg.SLEEP_SYSCALLS or asleep.fd_target == sg.TIMERFD)
            left = asleep.wakes_in if asleep is not None and kept else None
            left = asleep.wait_max if asleep is not None and asleep.syscall == "sigwait" else left  # (at the latest)
            if asleep is not None and left is not None and left < v.timer_bound_s:  # whatever its line, or none
                top = asleep.frames[0] if asleep.frames else top
                at = f"at {describe(top)}" if top is not None else f"in {asleep.syscall}()"
                how, ends = TIMER_WORDS.get(asleep.syscall or "", ("sleeps", "ends in"))
                return f"{v.label()} {how} {at}: its timer {ends} {duration_text(left)}"
            if top is None or not sg.SLEEP_LINE.search(top.code or ""):
                continue
            timer = left if left is not None else sg.sleep_timer(top.code)
            if timer is None or timer < v.timer_bound_s:
                return f"{v.label()} sleeps at {describe(top)}: a timer will wake it"
    return None
