"""What the job may still do by itself, which a proof of a hang must leave room for: another of its processes that may
signal a sidecar it runs until killed (``may_signal``), a job process that comes back to the user's code within the
bounds and may end what a process it started waits in (``acts_by_itself``), a process whose exit timer ends it
(``ends_itself``). Read from the state module's states."""

from __future__ import annotations

import os

from hangwatch import signatures as sg
from hangwatch.diagnose import proof, timers
from hangwatch.diagnose.deadline import leaves_by_clock, turns_left
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.state import ALIVE, thread_state
from hangwatch.diagnose.views import (
    ProcessView,
    ThreadView,
    describe,
    duration_text,
    innermost_user,
    may_exit,
    polls_with_timeout,
)


def may_signal(scene: Scene, x: ProcessView) -> str | None:
    """Another process of the job that runs again by itself within the bounds and may send ``x`` the signal that ends
    it (a sidecar run until killed), in words; else None: a thread of the user's (or a threading.Timer) in a timed
    wait, a native helper asleep (`sleep 12; kill`), the main thread of one asleep that is not ``x``'s ancestor (whose
    sleep may be its poll of ``x``: a file lock's). Never a DataLoader or compile worker, nor an mp helper."""
    parent = scene.view(x.info.ppid)
    ancestors = {x.info.ppid, parent.info.ppid if parent is not None else x.info.ppid}
    for v in scene.views:
        helper = not may_exit(v.role, v.info.cmdline)
        for t in v.threads if v.pid != x.pid and not v.ended and not helper else ():
            w = t.waiting if t.samples else None
            if w is None or w.timeout is not True or (w.wakes_in is not None and w.wakes_in >= v.timer_bound_s):
                continue
            asleep = w.syscall in sg.SLEEP_SYSCALLS and (not v.info.is_python or v.pid not in ancestors)
            user = any(sg.is_user(f) or proof.timer_run(f) for f in t.frames) and not proof.machinery(t)
            if (t is v.main_thread and asleep) or (t is not v.main_thread and user):
                ends = f", which ends in {duration_text(w.wakes_in)}" if w.wakes_in is not None else ""
                return f"thread {t.name!r} of {v.label()} waits in {w.syscall}() with a timeout{ends}: it may signal it"
    return None


def ends_itself(v: ProcessView) -> str | None:
    """A timer ``v``'s source arms that ends it when it fires, due within the bounds, in words; else None:
    faulthandler's (``dump_traceback_later(N, exit=True)``) where a thread of it with no Python stack, its watchdog,
    waits with a timeout read to end within the bounds; the kernel's alarm (``signal.alarm(N)``) where N is within the
    bounds and it has no SIGALRM handler (SigCgt read): the signal's default action ends it, at most N s after the
    call (its time left is not read; a handler's timeout is ``proof.alarmed``'s)."""
    for x in v.ev.exit_timers if not v.ended else ():
        where = f"`{x.code}` at {os.path.basename(x.file)}:{x.line}"
        if (
            x.kind == "alarm"
            and x.seconds is not None
            and x.seconds < v.timer_bound_s
            and proof.caught(v, proof.SIGALRM) == 0
        ):
            return f"{v.label()} arms the kernel's alarm ({where}) and has no SIGALRM handler: the alarm ends it"
        due = x.seconds is None or x.seconds < v.timer_bound_s  # (its N, where written, within the bounds too)
        for t in v.threads if x.kind == "faulthandler" and due else ():
            w = t.waiting if t.samples else None
            if t.has_stack or w is None or w.timeout is not True or w.wakes_in is None or w.wakes_in >= v.timer_bound_s:
                continue
            armed = f"armed faulthandler's exit timer ({where})"
            return f"{v.label()} {armed}, and a thread of it with no Python stack wakes in {duration_text(w.wakes_in)}"
    return None


# A thread in a timed wait of its own call's: asleep in it, blocked in it for the window, or caught as it moved into it
# (its stack changed in the window: a sleep, then the wait, says nothing either way of it but that newest wait)
TIMED_STATES = frozenset({"asleep", "blocked", "unknown", "brief"})


def acts_by_itself(v: ProcessView, besides: int | None = None) -> str | None:
    """What in ``v`` comes back to the user's code by itself within the bounds, in words, or None: its main thread in a
    wait with a timeout its own call set (reached from the user's line through the standard library alone: a
    library's retry loop, torch's poll of its workers, is not one), a sleep, a loop whose way out is the clock
    (``deadline.leaves_by_clock``: a poll with a deadline) or a count of turns left, each a timed wait, within the
    bounds (``deadline.turns_left``; or a count not read, ``self.tries``: it may end, when is not known); another
    thread of it in such a wait in its own function, called by no other of the user's (a guard that waits on an Event
    with a timeout, then kills), or that polls with such a way out (a watchdog), or a threading.Timer due within the
    bounds that may fire once (``timers.one_shot``). ``besides``: the waiter's own thread, which does not count. There
    it may end what a process it started waits in."""
    for t in (t for t in v.threads if t.tid != besides and t.has_stack and not v.ended):
        user, m, w = innermost_user(t.frames), thread_state(v, t), t.waiting
        who = v.label() if t is v.main_thread else f"{v.label()}, thread {t.name!r},"
        # (at its own line, a sleep or a wait of the standard library's: not inside a library's loop, a DataLoader's)
        own = user is not None and all(sg.is_stdlib_file(f.file) for f in t.frames[: t.frames.index(user)])
        reads = v.locals_of(t.tid)
        way = next((x for r in reads if (x := leaves_by_clock(r.body, dict(r.values)))), None)
        if own and way is not None and m.state in ALIVE:
            return f"{who} polls in a loop at {describe(user)} with a way out by the clock (`{way}`)"
        count = next((c for r in reads if (c := turns_left(r.body, dict(r.values)))), None)
        timed = w is not None and w.timeout is True and m.state in TIMED_STATES
        # (a turn: its sleeps as written, or the timed wait it is in: its header's too, `while not stop.wait(1)`)
        waits = (w.wait_max or 0.0, w.wakes_in or 0.0) if w is not None and w.timeout is True else ()
        turn = max([count[2] if count else 0.0, *waits])
        each = f", each sleeping {count[2]:g} s as written" if count and count[2] else ""
        if own and count is not None and count[1] is None and (m.state in ALIVE or timed) and turn > 0:
            # (its count is an attribute's, `self.tries`, or a call's: when it ends is not known, only that it may)
            way = f"a way out after a count of turns not read (`{count[0]}`)"
            return f"{who} polls in a loop at {describe(user)} with {way}{each}"
        if own and count is not None and (m.state in ALIVE or timed) and 0 < (count[1] or 0) * turn < v.timer_bound_s:
            return f"{who} polls in a loop at {describe(user)} with {count[1]} turns left at most (`{count[0]}`){each}"
        if t is not v.main_thread and m.state == "asleep" and timers.one_shot(v, t):
            return f"{who} a threading.Timer, is {m.fact}"
        # (another thread: where the user's code on its stack is one function, the thread's own, not at a module's top
        # level, and its loop was looked for: a caller of the user's may loop around the wait, which no read of its
        # loop saw, a module's top level is an import, which runs the module, not a function of the job's that may act)
        outer = t is not v.main_thread and (
            sum(map(sg.is_user, t.frames)) != 1 or not user or user.function == "<module>" or not _looked_for_loop(t)
        )
        if not own or reads or w is None or w.timeout is not True or outer:
            continue  # (a loop read around its wait: only its clock's way out, above, says it leaves)
        loop = polls_with_timeout(v, t)  # (an asyncio loop with a timer of its own due: `wait_for(..., 12)`)
        if loop is not None:
            return f"{who} {loop}"
        # (a poll's: the request, the most it may still wait; what is left of it is read only as a least, wakes_in)
        left = w.wait_max if w.wait_max is not None else w.wakes_in
        if left is not None and left < v.timer_bound_s and m.state in TIMED_STATES:
            ends = "ends within" if w.wait_max is not None else "ends in"
            return f"{who} waits at {describe(user)} with a timeout that {ends} {duration_text(left)}"
    return None


def _looked_for_loop(t: ThreadView) -> bool:
    """Whether capture looked for the loop around ``t``'s wait (capture/locals.sleeping_loops): its stack was read in
    two samples or more, each caught it idle, all at one line of the user's. Then no loop read means none is there;
    else (under load, a thread caught at two sleeps of its loop) one may be, which was not read."""
    stacks = [s for s in t.samples if s.frames]
    places = {(u.file, u.line) if (u := innermost_user(s.frames)) else None for s in stacks}
    return len(stacks) >= 2 and all(s.active is False for s in stacks) and len(places) == 1 and None not in places
