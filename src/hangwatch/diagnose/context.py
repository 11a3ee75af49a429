"""What a rule gets (Context) and returns (Hit)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hangwatch.diagnose import signatures as sig
from hangwatch.diagnose.views import ProcessView, ThreadView, build_views
from hangwatch.evidence import Evidence, Role
from hangwatch.incident import Finding, Verdict


@dataclass(frozen=True)
class Hit:
    """A finding, and what it says about the job as a whole."""

    finding: Finding
    verdict: Verdict


@dataclass
class Context:
    evidence: Evidence
    views: list[ProcessView] = field(default_factory=list)

    @classmethod
    def of(cls, ev: Evidence) -> Context:
        return cls(ev, build_views(ev))

    def view(self, pid: int) -> ProcessView | None:
        return next((v for v in self.views if v.pid == pid), None)

    def children(self, pid: int) -> list[ProcessView]:
        return [v for v in self.views if v.info.ppid == pid]

    def workers_of(self, pid: int) -> list[ProcessView]:
        return sorted((v for v in self.children(pid) if v.role == Role.DATALOADER_WORKER), key=lambda v: v.pid)

    def loader_waiters(self) -> list[tuple[ProcessView, ThreadView]]:
        """Processes whose main thread waits for a DataLoader batch (main, a rank, a child)."""
        out = []
        for v in self.views:
            t = v.main_thread
            if t is not None and v.role != Role.DATALOADER_WORKER and t.frames and any(
                    sig.at(f, sig.DATALOADER_PY, sig.LOADER_WAIT_METHODS) for f in t.frames):
                out.append((v, t))
        return out


Rule = Callable[[Context], list[Hit]]
