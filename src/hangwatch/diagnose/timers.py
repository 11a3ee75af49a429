"""Timer threads (``threading.Timer``): one that may fire once and let the job go on (``one_shot``), and a chain of
them that re-arm while the interpreter's exit waits on them (``rearmed_timers``), read from the threads seen and
the functions of the user's that start a Timer of themselves (``capture/rearm.py``)."""

from __future__ import annotations

import os
import re

from hangwatch import signatures as sg
from hangwatch.diagnose.proof import exit_join, timer_run
from hangwatch.diagnose.views import ProcessView, ThreadView
from hangwatch.records.evidence import Frame, Rearm


def one_shot(v: ProcessView, o: ThreadView) -> bool:
    """``o`` is a Timer that may fire once: ``v`` has more Timer threads than functions of the user's that start a
    Timer of themselves (each such chain has one at a time), so at least one of them runs its function and ends."""
    timers = sum(1 for x in v.threads if any(map(timer_run, x.frames)))
    return any(map(timer_run, o.frames)) and timers > len({(r.file, r.function) for r in v.ev.rearms})


def rearmed_timers(v: ProcessView, t: ThreadView) -> str | None:
    """Where ``t`` is a ``threading.Timer`` of a process whose exit waits on timers that re-arm, that fact in words:
    main was in ``threading._shutdown`` in every sample that read it, every other thread with a Python stack was a
    Timer, one in every sample (one chain: the exit waits on it, since a daemon is not joined and nothing else is
    there; two only at a hand-over, ``_one_chain``), none lasted the whole window (some ended; ``t`` started after the
    first sample), and the one function of the user's files read that starts a Timer of itself does it with no way
    out on its way (``rearm_site``). None otherwise: a timer due later, two chains, or a callback that may stop
    re-arming, is asleep, as it was. Whether the process runs or moves data is the state module's."""
    main, samples, site = v.main_thread, v.ev.samples, rearm_site(v)
    if main is None or t is main or v.ended or site is None or len(samples) < 2 or not any(map(timer_run, t.frames)):
        return None
    stacks = [s.frames for s in main.samples if s.frames]
    if not stacks or not all(any(sg.at(f, "threading.py", sg.EXIT_JOIN) for f in fs) for fs in stacks):
        return None
    others = [x for x in v.threads if x is not main and x.has_stack]
    numbered = [n for n in map(_thread_number, others) if n is not None]
    last = {x.tid for x in samples[-1].threads}  # (the next one caught in its bootstrap, numbered after all the rest)
    others = [x for x in others if not (_starting(x, last) and (_thread_number(x) or 0) >= max(numbered, default=0))]
    timers = {x.tid: x for x in others if any(map(timer_run, x.frames))}
    seen = [{x.tid for x in s.threads} & timers.keys() for s in samples]
    ended = [timers[tid] for tid in timers if tid not in seen[-1]]
    # two chains would show two Timers in most samples; one shows two only at a hand-over, each one tied to the next
    handovers = sum(len(x) == 2 for x in seen)
    one_chain = handovers * 2 <= len(seen) and all(_one_chain(seen, i, timers, site) for i in range(len(seen)))
    if len(timers) < len(others) or not ended or not one_chain or t.tid in seen[0]:
        return None
    return (
        f"{len(ended)} timer{'s' if len(ended) > 1 else ''} ended in the {v.duration_s:.0f} s window while the exit "
        f"waited ({', '.join(repr(x.name) for x in ended[:4])}), one Timer thread at a time was there in every sample "
        f"and no other thread but main ('{t.name}' started after the first sample), so the exit waits on a chain; "
        f"{site.function}(), the one function of the files read that starts a Timer of itself, does it at "
        f"{os.path.basename(site.file)}:{site.line} with no condition, return, raise, exit or cancel() on the way: "
        "each timer that ends leaves another"
    )


def _one_chain(seen: list[set[int]], i: int, timers: dict[int, ThreadView], site: Rearm) -> bool:
    """Sample ``i`` read one Timer of a chain: one Timer thread, or two caught at a hand-over (``_handed``)."""
    if len(seen[i]) != 2:
        return len(seen[i]) == 1
    later, earlier = set().union(*seen[i + 1 :]), set().union(*seen[:i])
    a, b = seen[i]
    return any(x not in later and y not in earlier and _handed(timers[x], timers[y], site) for x, y in ((a, b), (b, a)))


def _handed(old: ThreadView, new: ThreadView, site: Rearm) -> bool:
    """``old`` fired (its last stack is past its wait, never seen again) and started ``new``: its last stack runs the
    function that re-arms, or the two bear Python's names of two threads started one after the other (``Thread-7``,
    ``Thread-8``)."""
    frames = old.last.frames
    at = _timer_at(frames)
    if at is None or _in_wait(frames):
        return False  # (still in its own wait: not fired)
    a, b = _thread_number(old), _thread_number(new)
    callback = site.function.rsplit(".", 1)[-1]
    return any(sg.method(f) == callback for f in frames[:at]) or (a is not None and b == a + 1)


def _timer_at(frames: tuple[Frame, ...]) -> int | None:
    """Where a Timer's ``run`` is in the stack, innermost first; None: no Timer's stack."""
    return next((i for i, f in enumerate(frames) if timer_run(f)), None)


def _in_wait(frames: tuple[Frame, ...]) -> bool | None:
    """A Timer's stack in its own wait (True) or past it (False: it fired, or was cancelled); None: no Timer's."""
    at = _timer_at(frames)
    return None if at is None else at > 0 and sg.method(frames[at - 1]) == "wait" and not sg.is_user(frames[at - 1])


def fired(v: ProcessView) -> tuple[ThreadView, ...]:
    """The ``threading.Timer`` threads of ``v`` seen in their wait and, in the newest sample, past it: each fired (or
    was cancelled), runs its function once and ends, a change. None that runs the function of the user's that re-arms
    a Timer with no way out (``rearm_site``): those are the turns of that loop. (A look that lands as a one-shot Timer
    fires, the exit waiting for it, read main in ``threading._shutdown`` and nothing else moving: the clock killed a
    healthy job in CI.)"""
    site, newest = rearm_site(v), {x.tid: x.frames for x in v.ev.samples[-1].threads}
    again = site.function.rsplit(".", 1)[-1] if site is not None else None
    return tuple(
        t
        for t in v.threads
        if _in_wait(newest.get(t.tid, ())) is False
        and any(_in_wait(s.frames) for s in t.samples[:-1])
        and not any(sg.method(f) == again for f in newest[t.tid])
    )


def _starting(t: ThreadView, last: set[int]) -> bool:
    """``t`` was read once, in the last sample, still in threading's bootstrap (before its ``run``): a thread being
    started (the next Timer of a chain, where it bears the newest of Python's thread names)."""
    in_bootstrap = all(f.file.endswith("/threading.py") and sg.method(f) != "run" for f in t.frames)
    return len(t.samples) == 1 and t.tid in last and in_bootstrap


def _thread_number(t: ThreadView) -> int | None:
    """N of the name Python gives a thread started with none (``Thread-N``); None for any other name."""
    m = THREAD_NAME.fullmatch(t.name)
    return int(m.group(1)) if m else None


THREAD_NAME = re.compile(r"Thread-(\d+)")


def rearm_site(v: ProcessView) -> Rearm | None:
    """Where the one function of the user's that starts a Timer of itself (read at capture, ``capture/rearm.py``) does
    so with no condition on the way, where main is in the interpreter's exit. None where none does, or where more than
    one function re-arms (which one the timers seen run is not read: a thread shows no frame of the user's until its
    callback runs)."""
    main = v.main_thread
    if len({(r.file, r.function) for r in v.ev.rearms}) != 1 or main is None or not exit_join(main):
        return None
    return next((r for r in v.ev.rearms if not r.conditional), None)
