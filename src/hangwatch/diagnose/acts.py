"""What the job may still do by itself, which a proof of a hang must leave room for: another of its processes that may
signal a sidecar it runs until killed (``may_signal``), a job process that comes back to the user's code within the
bounds and may end what a process it started waits in (``acts_by_itself``). Read from the state module's states."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.diagnose import proof
from hangwatch.diagnose.deadline import leaves_by_clock
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.state import ALIVE, thread_state
from hangwatch.diagnose.views import ProcessView, describe, duration_text, innermost_user, may_exit


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


def acts_by_itself(v: ProcessView) -> str | None:
    """What brings the main thread of ``v`` back to the user's code by itself within the bounds, in words, or None: a
    wait with a timeout its own call set (reached from the user's line through the standard library alone: a
    library's retry loop, torch's poll of its workers, is not one), a sleep, or a loop whose way out is the clock
    (``deadline.leaves_by_clock``: a poll with a deadline). There it may end what a process it started waits in."""
    t = v.main_thread
    user = innermost_user(t.frames) if t is not None and t.has_stack and not v.ended else None
    if t is None or user is None:
        return None
    reads = v.locals_of(t.tid)
    way = next((w for r in reads if (w := leaves_by_clock(r.body, dict(r.values)))), None)
    if way is not None and thread_state(v, t).state in ALIVE:
        return f"{v.label()} polls in a loop at {describe(user)} with a way out by the clock (`{way}`)"
    left, below = t.last.wakes_in, t.frames[: t.frames.index(user)]
    if t.last.timeout is not True or left is None or left >= v.timer_bound_s or reads:
        return None  # (a loop read around it: only its clock's way out, above, says it leaves)
    if all(sg.is_stdlib_file(f.file) for f in below) and thread_state(v, t).state in ("asleep", "blocked"):
        return (
            f"{v.label()} waits at {describe(user)} with a timeout of its own call's that ends in {duration_text(left)}"
        )
    return None
