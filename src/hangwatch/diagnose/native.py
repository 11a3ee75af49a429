"""Native culprits after fork: a forked process asleep inside OpenMP, MKL, tokenizers, CUDA or NCCL,
named from its native frames (capture's native pass)."""

from __future__ import annotations

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose.scene import Hit, Scene, named
from hangwatch.diagnose.views import ProcessView, ThreadView, describe
from hangwatch.records.evidence import Frame, NativeStack
from hangwatch.records.incident import Finding, Where


def _culprit(stack: NativeStack) -> tuple[Frame, str, tuple[str, ...]] | None:
    """The innermost native frame in a known library, with its name and fix."""
    for f in stack.frames:
        if not f.native:
            continue
        lib = f.file.rsplit("/", 1)[-1]
        for marker, name, fix in sg.NATIVE_FORK_CULPRITS:
            if marker in lib:
                return f, name, fix
    return None


def native_fork_rule(scene: Scene) -> list[Hit]:
    """fork.inherited_lock from native frames: a forked process waits inside a library whose threads
    or locks did not survive the fork."""
    hits = []
    for v in scene.views:
        t = v.main_thread
        forked = v.info.forked_from_parent or (t is not None and t.any_frame(lambda f: sg.at(f, *sg.FORK_LAUNCH)))
        if not v.ev.native or not forked:
            continue  # (a worker started by spawn inherited nothing; one forked shows popen_fork's frame)
        if t is None or (t.cpu_percent or 0.0) > 5.0 or t.woke_often:
            continue  # busy inside the library (e.g. an OpenMP op under --native): not stuck in it
        main = next((s for s in v.ev.native if s.tid == v.pid), v.ev.native[0])
        found = _culprit(main)
        if found is None:
            continue
        frame, name, fix = found
        hits.append(_finding(v, t, main, frame, name, fix))
    return hits


def _finding(v: ProcessView, t: ThreadView, stack: NativeStack, frame: Frame, name: str, fix: tuple[str, ...]) -> Hit:
    user = next((f for f in stack.frames if not f.native and sg.is_user(f)), None)
    if user is not None:  # the Python samples carry the source line
        user = next((f for f in t.frames if (f.file, f.line) == (user.file, user.line)), user)
    lib = frame.file.rsplit("/", 1)[-1]
    natives = [f for f in stack.frames if f.native][:4]
    ev = [
        f"{v.label()} was forked from pid {v.info.ppid} and sleeps in {name}: {frame.function} ({lib})",
        "native stack, innermost first: "
        + " < ".join(f"{f.function[:60]} ({f.file.rsplit('/', 1)[-1]})" for f in natives),
    ]
    ev.append(
        f"{v.label()} at {v.cpu_text()}, kernel wait {t.last.wchan or '?'}, "
        f"{v.ev.samples[-1].num_threads} OS thread(s): fork copied only the forking thread"
    )
    where = (
        v.where(t, user)
        if user is not None
        else Where(pid=v.pid, rank=v.info.rank, tid=v.pid, file=frame.file, line=None, function=frame.function)
    )
    said = (
        f"{v.label()} is stuck in {name} after fork, at {describe(user)}: the parent's {name} "
        "threads or locks do not exist in the child, which waits for them forever."
    )
    return named(Finding(Cause.FORK_INHERITED_LOCK, 0.9, said, where, tuple(ev), fix))
