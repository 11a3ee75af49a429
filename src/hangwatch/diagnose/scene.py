"""What a rule sees of one capture (Scene: the evidence, a view per process, lookups between them) and what it
returns (Hit)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING

from hangwatch import signatures as sg
from hangwatch.capture.roles import forkserver, is_mp_helper
from hangwatch.causes import Cause
from hangwatch.diagnose.views import ProcessView, ThreadView, build_views
from hangwatch.records.evidence import Evidence, Frame, Role
from hangwatch.records.incident import Finding, Verdict
from hangwatch.records.values import frozen, mutable

if TYPE_CHECKING:
    from hangwatch.diagnose.ends import End

Said = list[str] | tuple[str, ...]  # evidence, a fix: sentences (never one bare string)


@frozen
class Hit:
    """A finding, and what it says about the job as a whole."""

    finding: Finding
    verdict: Verdict | None  # None: a namer's finding, judged by the verdict stage (verdict.judged)
    end: End | None = None  # what its waiters wait for, as measured (ranks: ends.End), for the verdict stage


def named_at(
    v: ProcessView, t: ThreadView | None, at: Frame | None, cause: Cause, sure: float, said: str, ev: Said, fix: Said
) -> Hit:
    """A namer's finding (``named``) at ``at``, a frame of thread ``t`` of ``v``."""
    return Hit(Finding(cause, sure, said, v.where(t, at), tuple(ev), tuple(fix)), None)


def named(finding: Finding, end: End | None = None) -> Hit:
    """A namer's finding, with no verdict of its own: the verdict stage gives it the one the measured state of its
    thread says, or, where the namer attached what its waiters wait for (``end``: a rank away from their collective,
    peers not joined), the one that end's state makes (``verdict.judged``)."""
    return Hit(finding, None, end)


@mutable
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

    def others_alive(self, pid: int) -> list[int]:
        """The captured processes but ``pid`` that did not end during the look: any of them may still send it a
        signal."""
        return [v.pid for v in self.views if v.pid != pid and not v.ended]

    def descendants(self, pid: int) -> list[ProcessView]:
        """The captured processes ``pid`` started, and theirs, breadth first."""
        out: list[ProcessView] = []
        todo = [pid]
        while todo:
            kids = [c for p in todo for c in self.children(p) if c not in out]
            out += kids
            todo = [c.pid for c in kids]
        return out

    def pool_parents(self, pid: int) -> set[int]:
        """The pids whose children are the processes multiprocessing starts for ``pid``: itself, and its forkserver
        (under the forkserver start method a pool's workers are the forkserver's children, not their pool's)."""
        return {pid} | {c.pid for c in self.children(pid) if forkserver(c.info.cmdline)}

    def pool_workers(self, pid: int) -> list[ProcessView]:
        """The processes multiprocessing started for ``pid``: its children but its helpers, and the children of its
        forkserver (forked from it, they carry its command line)."""
        out: list[ProcessView] = []
        for p in sorted(self.pool_parents(pid)):
            parent = self.view(p)
            line = parent.info.cmdline if parent is not None else ()
            out += [c for c in self.children(p) if not is_mp_helper(c.info.cmdline, line)]
        return out

    def workers_of(self, pid: int) -> list[ProcessView]:
        """The DataLoader workers of ``pid`` (its children, or its forkserver's under that start method)."""
        return sorted(
            (v for p in self.pool_parents(pid) for v in self.children(p) if v.role == Role.DATALOADER_WORKER),
            key=lambda v: v.pid,
        )

    @staticmethod
    def waits_for_batch(v: ProcessView) -> bool:
        """Whether ``v``'s main thread waits for a DataLoader batch (main, a rank, a child; never a worker): in its
        newest stack, or in at least half of its stacks. What it did in the window decides, never the luck of the
        last sample (a main caught between two batches, in ``__next__`` on a loaded machine)."""
        t = v.main_thread
        if t is None or v.role == Role.DATALOADER_WORKER or not t.frames:
            return False
        stacks = t.stacks
        waiting = [any(sg.at(f, sg.DATALOADER_PY, sg.LOADER_WAIT_METHODS) for f in st) for st in stacks]
        return bool(waiting) and (waiting[-1] or 2 * sum(waiting) >= len(waiting))

    def loader_waiters(self) -> list[tuple[ProcessView, ThreadView]]:
        """Processes whose main thread waits for a DataLoader batch (main, a rank, a child)."""
        return [(v, v.main_thread) for v in self.views if v.main_thread is not None and self.waits_for_batch(v)]


Rule = Callable[[Scene], list[Hit]]
