"""torch.compile / inductor: main in a compile, named; the state of main and of its compilers judges it."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose.scene import Hit, Scene, named
from hangwatch.diagnose.state import COMPILER_CPU_PERCENT, compiler_at_work
from hangwatch.diagnose.views import ProcessView, ThreadView, describe
from hangwatch.fixes import COMPILE_FIX
from hangwatch.records.evidence import Role
from hangwatch.records.incident import Finding


def compile_rule(scene: Scene) -> list[Hit]:
    """compile.in_progress: main in torch.compile / inductor / Triton, with what its compilers do."""
    hits = []
    busy_compilers = [c for c in scene.views if compiler_at_work(c)]
    for v in scene.views:
        if v.role in (Role.COMPILE_WORKER, Role.DATALOADER_WORKER, Role.LAUNCHER):
            continue
        t = v.main_thread
        if t is None or not t.any_frame(sg.is_compile_frame):
            continue
        own_kids = [
            c for c in busy_compilers if c.info.ppid == v.pid or c.info.ppid in {k.pid for k in scene.children(v.pid)}
        ]
        hits.append(_compile_hit(v, t, own_kids))
    return hits


def _compile_hit(v: ProcessView, t: ThreadView, own_kids: list[ProcessView]) -> Hit:
    """Main in torch.compile, named with what was measured of it and its compilers; the verdict stage judges it
    by the state of main and of what its wait leads to (a compiler it reads from, a child that works)."""
    active = (v.cpu_percent or 0.0) > COMPILER_CPU_PERCENT or t.stack_changed or bool(own_kids)
    frame = t.user_frame
    comp = next((f for f in t.frames if sg.is_compile_frame(f)), None)
    ev = [
        f"{v.label()} in torch.compile for this window, called from {describe(frame)}",
        f"compiler frame: {describe(comp)}",
        f"{v.label()} at {v.cpu_text()}" + (", stack moving between samples" if t.stack_changed else ""),
    ]
    if own_kids:
        ev.append("compiler processes working: " + ", ".join(f"{c.info.name} (pid {c.pid})" for c in own_kids[:4]))
    if not active:
        summary = (
            f"{v.label()} sits in torch.compile at {describe(frame)} with no CPU use or movement, and no compiler "
            "of its own at work: the compile itself may be stuck."
        )
        fix = COMPILE_FIX[3:] + COMPILE_FIX[:1]
        return named(Finding(Cause.COMPILE_IN_PROGRESS, 0.45, summary, v.where(t, frame), tuple(ev), fix))
    kid = max(own_kids, key=lambda c: c.cpu_percent or 0.0, default=None)
    if kid is not None:
        at = f"at {kid.cpu_text()}" if kid.cpu_percent is not None else f"(state {kid.state})"
        doing = f"its compiler {kid.info.name} (pid {kid.pid}) runs {at}"
    else:
        doing = f"it runs at {v.cpu_text()}" + (" with its stack moving" if t.stack_changed else "")
    summary = f"{v.label()} is compiling (torch.compile/inductor) for the call at {describe(frame)}: {doing}."
    return named(Finding(Cause.COMPILE_IN_PROGRESS, 0.85, summary, v.where(t, frame), tuple(ev), COMPILE_FIX))
