"""Process-level causes: a stopped process, a parent waiting on a stuck child."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.diagnose.context import Context, Hit
from hangwatch.diagnose.views import ProcessView, describe, innermost_explaining, innermost_user
from hangwatch.evidence import Role
from hangwatch.incident import Finding, Verdict
from hangwatch.signatures import CHILD_WAIT_FIX

STOPPED_STATES = frozenset({"T", "t"})


def stopped_rule(ctx: Context) -> list[Hit]:
    """process.stopped: a process of the job is stopped (SIGSTOP, Ctrl-Z, a debugger)."""
    hits = []
    for v in ctx.views:
        if v.state not in STOPPED_STATES:
            continue
        t = v.main_thread
        frame = innermost_user(t.frames) if t else None
        how = "a debugger or tracer" if v.state == "t" else "SIGSTOP, Ctrl-Z or a debugger"
        hits.append(Hit(Finding(
            cause="process.stopped", confidence=0.95,
            summary=f"{v.label()} is stopped ({how}): it will not run again until it is continued.",
            where=v.where(t, frame),
            evidence=(f"{v.label()} in state {v.state} (stopped) for the whole {v.duration_s:.0f} s window",
                      f"it was at {describe(frame)} when it stopped"),
            fix=(f"kill -CONT {v.pid}  (or `fg` in the shell that suspended it)",
                 "If a debugger is attached, detach it or continue the process in it.")),
            Verdict.STOPPED))
    return hits




def _waits_for_child(v: ProcessView) -> bool:
    """In a Python child-wait frame, or blocked in waitpid (os.system, os.waitpid) or on a pipe
    (reading a child's output) for the whole window."""
    t = v.main_thread
    if t is None:
        return False
    if t.frames and any(sg.matches_any(f, sg.CHILD_WAIT) for f in t.frames[:8]):
        return True
    wchan = t.last.wchan or ""
    reads_pipe = t.last.syscall == "read" and t.last.fd_target == "pipe"
    return t.idle_throughout and (wchan == sg.CHILD_WAIT_WCHAN or reads_pipe
                                  or any(w in wchan for w in sg.PIPE_WCHANS))


def child_wait_rule(ctx: Context) -> list[Hit]:
    """child.wait: the job waits on a subprocess that is itself stuck."""
    hits = []
    for v in ctx.views:
        # A shell or launcher waiting for its child is the job's normal shape, not a cause.
        if v.role in (Role.DATALOADER_WORKER, Role.LAUNCHER) or not v.has_stacks or not _waits_for_child(v):
            continue
        kids = [c for c in ctx.children(v.pid) if c.role not in (Role.DATALOADER_WORKER, Role.COMPILE_WORKER)]
        if not kids or (v.cpu_percent or 0.0) > 5.0:
            continue
        kid = kids[0]
        kt = kid.main_thread
        kframe = innermost_explaining(kt.frames) if kt and kt.frames else None
        t = v.main_thread
        pframe = innermost_user(t.frames) if t else None
        kid_cmd = " ".join(kid.info.cmdline)[:120]
        ev = [f"{v.label()} waits for child pid {kid.pid} at {describe(pframe)}"
              + (f" `{pframe.code}`" if pframe and pframe.code else ""),
              f"child pid {kid.pid} (`{kid_cmd}`) is {kid.state} at {kid.cpu_text()}"
              + (f", in {describe(kframe)}" if kframe else "")]
        if (kt and kt.any_frame(lambda f: sg.at(f, "multiprocessing/queues.py", frozenset({"_feed"})))) or (
                kt and kt.any_frame(lambda f: sg.at(f, "multiprocessing/util.py", frozenset({"_exit_function"})))):
            ev.append("the child is still flushing a multiprocessing.Queue that nobody reads (join before get)")
        moving = kt is not None and kt.stack_changed and (kid.cpu_percent or 0.0) > 5.0
        where = kid.where(kt, innermost_user(kt.frames)) if kt and innermost_user(kt.frames) else v.where(t, pframe)
        hits.append(Hit(Finding(
            cause="child.wait", confidence=0.7 if moving else 0.82,
            summary=(f"{v.label()} waits for its child pid {kid.pid}, which is "
                     + ("still working." if moving else "itself stuck.")),
            where=where, evidence=tuple(ev), fix=CHILD_WAIT_FIX), Verdict.SLOW if moving else Verdict.HUNG))
    return hits
