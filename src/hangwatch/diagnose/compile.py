"""torch.compile / inductor: alive and compiling, not hung."""

from __future__ import annotations

import os

from hangwatch import signatures as sg
from hangwatch.capture.roles import is_compile_worker
from hangwatch.causes import Cause
from hangwatch.diagnose import proof
from hangwatch.diagnose.scene import Hit, Scene
from hangwatch.diagnose.views import ProcessView, ThreadView, describe
from hangwatch.fixes import COMPILE_FIX
from hangwatch.records.evidence import Role
from hangwatch.records.incident import Finding, Proof, Verdict

BUSY_CPU_PERCENT = 5.0  # what the rule calls a busy compiler, and work when measured


def compile_rule(scene: Scene) -> list[Hit]:
    """compile.in_progress: torch.compile / inductor / Triton compiling (alive), or a compile that stopped."""
    hits = []
    compilers = [v for v in scene.views if v.role == Role.COMPILE_WORKER]
    busy_compilers = [c for c in compilers if (c.cpu_percent or 0.0) > BUSY_CPU_PERCENT or c.state == "R"]
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
    """Main in torch.compile: alive and compiling where it or its compilers work, else a compile that may be
    stuck (unproven: the clock decides)."""
    active = (v.cpu_percent or 0.0) > 5.0 or t.stack_changed or bool(own_kids)
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
            f"{v.label()} sits in torch.compile at {describe(frame)} with no CPU use or movement: "
            "the compile itself may be stuck."
        )
        stuck = Finding(
            Cause.COMPILE_IN_PROGRESS, 0.45, summary, v.where(t, frame), tuple(ev), COMPILE_FIX[3:] + COMPILE_FIX[:1]
        )
        return Hit(stuck, Verdict.HUNG)
    summary = (
        f"{v.label()} is compiling (torch.compile/inductor) for the call at {describe(frame)}: "
        "it is alive and working, not hung."
    )
    working = Finding(
        Cause.COMPILE_IN_PROGRESS,
        0.85,
        summary,
        v.where(t, frame),
        tuple(ev),
        COMPILE_FIX,
        proof=_compiling(v, own_kids),
    )
    return Hit(working, Verdict.SLOW)


def _compiling(v: ProcessView, compilers: list[ProcessView]) -> Proof | None:
    """Work measured in the compile: a compiler process of its own at CPU (one it waits on through a pipe counts,
    caught before the capture took it in), or its own CPU with its stack moving."""
    busy = next((c for c in compilers if (c.cpu_percent or 0.0) > BUSY_CPU_PERCENT), None)
    if busy is not None:
        return proof.work(f"its compiler {busy.info.name} (pid {busy.pid}) used {busy.cpu_text()}")
    for w in v.ev.waits:
        for h in w.holders:
            program = os.path.basename(h.cmdline.split(" ", 1)[0])
            if is_compile_worker(program, tuple(h.cmdline.split())) and (h.cpu_percent or 0.0) > BUSY_CPU_PERCENT:
                return proof.work(
                    f"its compiler {program} (pid {h.pid}), whose output it reads, used {h.cpu_percent:.0f}% CPU"
                )
    t = v.main_thread
    if t is not None and t.stack_changed and (v.cpu_percent or 0.0) > BUSY_CPU_PERCENT:
        return proof.work(f"{v.label()} used {v.cpu_text()} with its stack moving in the compiler")
    return None
