"""What a rule sees of one capture (Scene: the evidence, a view per process, lookups between them) and what it
returns (Hit)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hangwatch import signatures as sg
from hangwatch.diagnose.views import IDLE_CPU_PERCENT, ProcessView, ThreadView, build_views, describe
from hangwatch.records.evidence import Evidence, Role
from hangwatch.records.incident import Finding, Verdict
from hangwatch.signatures import SLEEP_LINE, sleep_timer


@dataclass(frozen=True)
class Hit:
    """A finding, and what it says about the job as a whole."""

    finding: Finding
    verdict: Verdict


@dataclass
class Scene:
    """What every rule sees of one capture: the evidence, one view per process, and lookups between them."""

    evidence: Evidence
    views: list[ProcessView] = field(default_factory=list)

    @classmethod
    def of(cls, ev: Evidence) -> Scene:
        """The context of one capture."""
        return cls(ev, build_views(ev))

    def view(self, pid: int) -> ProcessView | None:
        """The view of ``pid``, if captured."""
        return next((v for v in self.views if v.pid == pid), None)

    def children(self, pid: int) -> list[ProcessView]:
        """The captured children of ``pid``."""
        return [v for v in self.views if v.info.ppid == pid]

    def workers_of(self, pid: int) -> list[ProcessView]:
        """The DataLoader workers of ``pid``."""
        return sorted((v for v in self.children(pid) if v.role == Role.DATALOADER_WORKER), key=lambda v: v.pid)

    @staticmethod
    def waits_for_batch(v: ProcessView) -> bool:
        """Whether ``v``'s main thread waits for a DataLoader batch (main, a rank, a child; never a worker)."""
        t = v.main_thread
        return (
            t is not None
            and v.role != Role.DATALOADER_WORKER
            and bool(t.frames)
            and any(sg.at(f, sg.DATALOADER_PY, sg.LOADER_WAIT_METHODS) for f in t.frames)
        )

    def loader_waiters(self) -> list[tuple[ProcessView, ThreadView]]:
        """Processes whose main thread waits for a DataLoader batch (main, a rank, a child)."""
        return [(v, v.main_thread) for v in self.views if v.main_thread is not None and self.waits_for_batch(v)]

    def moving(self) -> str | None:
        """What in the job moves, or will by itself (a timer within the job's bounds), in words; None when nothing
        does. The one answer to "does anything of this job move?" that the verdict without a named cause and the
        startup probes both ask."""
        for v in self.views:  # every process, whatever its role: a wget child counts as much as main
            if (v.cpu_percent or 0.0) > IDLE_CPU_PERCENT:
                return f"{v.label()} used {v.cpu_text()}"
            if v.work is not None:
                return v.work
            if v.moved_data or (v.delta("write_bytes") or 0) + (v.delta("read_bytes") or 0) > 0:
                return f"{v.label()} moved data"
            if v.stdout_grew or (v.role != Role.LAUNCHER and any(t.woke_often for t in v.threads if t.has_stack)):
                return f"{v.label()} woke up or wrote output"  # torchrun's agent wakes to poll its ranks: not work
            for t in v.threads if v.role != Role.LAUNCHER else ():  # torchrun's agent sleeps between its polls
                top = t.frames[0] if t.frames else None  # time.sleep is C: its caller's line, in any file
                left = t.last.wakes_in if t.samples else None  # the kernel's timer: Python or native (`sleep 20`)
                if top is None and left is not None and left < v.timer_bound_s:
                    return f"{v.label()} sleeps in {t.last.syscall}(): its timer ends in {left:.0f} s"
                if top is None or not SLEEP_LINE.search(top.code or ""):
                    continue
                timer = left if left is not None else sleep_timer(top.code)
                if timer is None or timer < v.timer_bound_s:
                    return f"{v.label()} sleeps at {describe(top)}: a timer will wake it"
        return None


Rule = Callable[[Scene], list[Hit]]
