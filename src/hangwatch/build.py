"""Assemble an Incident from evidence and its diagnosis."""

from __future__ import annotations

import time

from hangwatch.diagnose import Diagnosis
from hangwatch.diagnose.views import build_views
from hangwatch.evidence import Evidence
from hangwatch.incident import (
    Action,
    FrameRecord,
    Incident,
    LastProgress,
    ProcessRecord,
    ThreadRecord,
)


def build_incident(ev: Evidence, diagnosis: Diagnosis, *, attempt: int = 1, action: Action = Action.NONE,
                   last_progress: LastProgress | None = None, detected_at: float | None = None) -> Incident:
    processes = []
    for v in build_views(ev):
        last = v.ev.samples[-1]
        threads = tuple(
            ThreadRecord(tid=t.tid, name=t.name, idle=not bool(t.last.active),
                         frames=tuple(FrameRecord(f.function, f.file, f.line) for f in t.frames))
            for t in v.threads if t.tid in {x.tid for x in last.threads}
        )
        cpu = v.cpu_percent
        processes.append(ProcessRecord(
            pid=v.pid, ppid=v.info.ppid, role=v.role.value, rank=v.info.rank, state=last.state,
            cpu_percent=round(cpu, 1) if cpu is not None else None, cmdline=" ".join(v.info.cmdline),
            threads=threads))
    return Incident(
        verdict=diagnosis.verdict, detected_at=detected_at if detected_at is not None else time.time(),
        last_progress=last_progress, attempt=attempt, action=action, processes=tuple(processes),
        findings=diagnosis.findings, window_seconds=round(ev.ended_at - ev.started_at, 2), notes=ev.notes)
