"""Assemble the incident record from evidence and its diagnosis: each process with its threads and
where it is, the findings, the window."""

from __future__ import annotations

import time

from hangwatch import signatures as sg
from hangwatch.diagnose.collectives import collective_rows
from hangwatch.diagnose.engine import Diagnosis
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.views import ProcessView, build_views
from hangwatch.diagnose.workers import held_batch
from hangwatch.records.evidence import Evidence, Frame
from hangwatch.records.incident import Action, FrameRecord, Incident, LastProgress, ProcessRecord, ThreadRecord


def _record(f: Frame) -> FrameRecord:
    return FrameRecord(f.function, f.file, f.line)


def process_where(v: ProcessView) -> tuple[FrameRecord, ...]:
    """Where the main thread is: its innermost user frame, then the innermost library frame below it
    when they differ (``train (train.py:40) > _try_get_data (dataloader.py:1133)``)."""
    main = v.main_thread
    if main is None or not main.frames:
        return ()
    frames = sg.own_frames(main.frames)  # a forked child's copy of its parent's frames says nothing
    if not frames:
        return (_record(main.frames[0]),)
    inner = next((f for f in frames if not sg.is_stdlib_file(f.file)), frames[0])
    if not sg.is_library_file(inner.file):
        return (_record(inner),)
    user = next((f for f in frames if not sg.is_library_file(f.file)), None)
    return (_record(inner),) if user is None else (_record(user), _record(inner))


def build_incident(
    ev: Evidence,
    diagnosis: Diagnosis,
    *,
    attempt: int = 1,
    action: Action = Action.NONE,
    last_progress: LastProgress | None = None,
    detected_at: float | None = None,
    remedy: str | None = None,
) -> Incident:
    """The incident record of one capture."""
    processes = [_process_record(v) for v in build_views(ev)]
    return Incident(
        verdict=diagnosis.verdict,
        detected_at=detected_at if detected_at is not None else time.time(),
        last_progress=last_progress,
        attempt=attempt,
        action=action,
        processes=tuple(processes),
        findings=diagnosis.findings,
        window_seconds=round(ev.ended_at - ev.started_at, 2),
        notes=ev.notes,
        remedy=remedy,
        gpu=ev.gpu,
        kernel=ev.kernel,
        collectives=collective_rows(Scene.of(ev)),
        graph=diagnosis.graph.to_dict() if diagnosis.graph is not None and diagnosis.graph.edges else None,
    )


def _process_record(v: ProcessView) -> ProcessRecord:
    """One process as the incident shows it: its newest sample's threads (their frames), state and CPU, where it
    is, and the batch it holds."""
    last = v.ev.samples[-1]
    threads = tuple(
        ThreadRecord(tid=t.tid, name=t.name, idle=not bool(t.last.active), frames=tuple(_record(f) for f in t.frames))
        for t in v.threads
        if t.tid in {x.tid for x in last.threads}
    )
    cpu = v.cpu_percent
    return ProcessRecord(
        pid=v.pid,
        ppid=v.info.ppid,
        role=v.role.value,
        rank=v.info.rank,
        state=last.state,
        cpu_percent=round(cpu, 1) if cpu is not None else None,
        cmdline=" ".join(v.info.cmdline),
        threads=threads,
        where=process_where(v),
        holds=held_batch(v) if v.ev.loader_task is not None else None,
    )
