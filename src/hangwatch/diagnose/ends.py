"""What a finding's waiters wait for, as measured, where that is not a thread the wait-for graph follows: a rank away
from the collective its peers wait in (its state, read by the state module, with the collective's timeout as the bound
of its timers), a rank that is not there, ranks whose calls went different ways, a transport that stalled, peers that
have not joined; a device or a server the kernel log says failed, a process it says it killed, a GPU busy for the
whole window. The namers (distributed.py, collectives.py, nodes.py, gpu.py) attach it to their finding (``Hit.end``)
and choose their words by it; the verdict stage (``verdict.by_end``) alone turns it into a verdict and a proof
(``end_verdict``: the state module's ``VERDICTS``, and the ends of their own below).

A rank's end travels between nodes in its summary (``to_dict``/``from_dict``)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from hangwatch import signatures as sg
from hangwatch.diagnose import proof
from hangwatch.diagnose.scene import Scene
from hangwatch.diagnose.state import VERDICTS, thread_state
from hangwatch.diagnose.views import ProcessView, ThreadView, describe, duration_text, timer_bound
from hangwatch.diagnose.workers import busy_worker
from hangwatch.records.incident import ProofKind, Verdict
from hangwatch.records.values import frozen

DEFAULT_PG_TIMEOUT_S = {"nccl": 600.0, "gloo": 1800.0}  # init_process_group's defaults (torch 2.x)

# The ends that are no process's state, and what they make the waits on them: (the verdict, whether the end is itself
# proof of a hang). Of ranks: ``missing`` (a rank neither on this node nor reported by another), ``diverged`` (their
# recorders show different calls at one sequence number: none can complete), ``stalled`` (every rank entered a
# collective, none completed: the transport), ``joining`` (peers that have not joined the process group yet: bounded
# by --rendezvous-timeout). From the kernel and the devices: ``failed`` (the kernel log says a device, its driver or a
# server the job waits on failed: hung, for --min-stall to confirm, since a fault may also end in an error),
# ``killed`` (the OOM killer killed a process of the job: the rest may wait for it forever, or raise), ``busy`` (a GPU
# busy for the whole window while the host waits: a long kernel, alive until --max-slow).
OWN_ENDS: dict[str, tuple[Verdict, bool]] = {
    "missing": (Verdict.HUNG, False),
    "diverged": (Verdict.HUNG, True),
    "stalled": (Verdict.HUNG, False),
    "joining": (Verdict.WAITING, False),
    "failed": (Verdict.HUNG, False),
    "killed": (Verdict.HUNG, False),
    "busy": (Verdict.SLOW, False),
}


def end_verdict(state: str) -> tuple[Verdict, bool]:
    """What the waiters are, by the state of what they wait for (the verdict, whether that state is itself proof of a
    hang): an end of its own as ``OWN_ENDS`` says; a rank's state as ``state.VERDICTS`` says it of any wait (stuck:
    hung; asleep or waking: slow), but that a rank at work is waited for (``waiting``, bounded by --max-slow), one
    seen too briefly may still come (slow), one gone ends their wait (its exit ends the collective, as the graph's
    ``ENDED_BY_EXIT`` says: slow), and one whose state was not read holds them up (hung, for --min-stall to
    decide)."""
    if state in OWN_ENDS:
        return OWN_ENDS[state]
    if state == "gone":  # its exit ends the collective it was in (the others get its end of the connection and raise)
        return Verdict.SLOW, False
    verdict, proven = VERDICTS.get(state, (None, False))
    if verdict == Verdict.SLOW and state == "working":
        return Verdict.WAITING, proven
    if verdict is None:
        return (Verdict.SLOW if state == "brief" else Verdict.HUNG), False
    return verdict, proven


STUCK = frozenset({"stopped", "blocked", "spinning"})  # in words: "stuck"
RESTING = frozenset({"asleep", "wakes", "long_sleep", "looping"})  # in words: asleep, or waking again and again
RESTING_WORDS = {
    "asleep": "asleep",
    "long_sleep": "asleep",
    "looping": "asleep",
    "wakes": "waking again and again",
    "idle": "idle, waiting for work of its own",
    "brief": "seen too briefly to say",
    "unknown": "doing what was not read",
    "missing": "not found",
}


@frozen
class End:
    """What a finding's waiters wait for, as measured: the state (the state module's word, or a rank's own end),
    the fact in words, and whether the fact proves a hang (a spin that gets nowhere, a wait nothing can release, a
    timer past the collective's timeout) or work (locals that advance, bytes moving)."""

    state: str
    fact: str | None = None
    proves_hang: bool = False
    proves_work: bool = False

    @property
    def holds_up(self) -> bool:
        """Whether it holds its waiters up (``end_verdict`` says hung, or its fact proves it): the namers' words
        follow it."""
        return (self.proves_hang and self.fact is not None) or end_verdict(self.state)[0] == Verdict.HUNG

    @property
    def first(self) -> tuple[bool, bool]:
        """The order in which ends that hold their waiters up are named: the proven first, then those measured
        stuck (one not read or idle after them)."""
        return not self.proves_hang, self.state not in STUCK

    def at_work(self) -> str:
        """A working end in words: "working" where its fact proves work, else what was measured (CPU alone)."""
        return "working, not stuck" if self.proves_work else "at work, not proven stuck"

    def how(self) -> str:
        """Its state in a word or two: "stuck" only where it is measured so (blocked, spinning, stopped); a loop with
        no way out is said asleep, as the sleep it is in."""
        return RESTING_WORDS.get(self.state) or ("stuck" if self.state in STUCK else self.state.replace("_", " "))

    def to_dict(self) -> dict[str, Any]:
        """The end as JSON (a rank's summary, shared with the other nodes)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> End:
        """A rank's end from its node's summary; a node of an older version said ``activity`` and ``proof`` (the
        proof's own fact is the one said). A proof needs its fact: without one, the end proves nothing."""
        old = d.get("proof") or {}
        state = str(d.get("state") or d.get("activity") or "unknown")
        fact = old.get("fact") or d.get("fact")
        return cls(
            state if state in VERDICTS or state in OWN_ENDS else "unknown",
            fact,
            fact is not None and (bool(d.get("proves_hang")) or old.get("kind") == ProofKind.HANG.value),
            fact is not None and (bool(d.get("proves_work")) or old.get("kind") == ProofKind.WORK.value),
        )

    def old_proof(self) -> dict[str, str] | None:
        """The proof as a node of an older version reads it from a summary (``Proof.to_dict``'s form)."""
        kind = ProofKind.HANG if self.proves_hang else ProofKind.WORK if self.proves_work else None
        return {"kind": kind.value, "fact": self.fact} if kind is not None and self.fact is not None else None


def collective_limit(scene: Scene) -> float | None:
    """How long the ranks that wait may wait at most: the longest timeout of a collective a rank's recorder
    shows it waiting in (None without a recorder). The longest: a sleep is past it only past every wait."""
    limits = [
        e.timeout_ms / 1000
        for v in scene.views
        if v.ev.flight is not None
        for e in v.ev.flight.entries
        if not e.done and e.timeout_ms
    ]
    return max(limits) if limits else None


def rank_end(scene: Scene, v: ProcessView, t: ThreadView, limit_s: float | None = None) -> End:
    """What a rank away from the collective its peers wait in is doing: the state module's reading of its main
    thread, or of the busy DataLoader worker it waits for; asleep, on a timer that ends after the collective gives up
    (``limit_s``, the process group's timeout; torch's defaults and --max-slow where no recorder told it) it can
    never arrive in time."""
    subject, st = busy_worker(scene, v, t) or (v, t)
    m = thread_state(subject, st)
    if m.state == "working":
        advances = m.motion is not None and m.motion.advanced  # (one long call per turn: its locals stay)
        fact = f"its loop advances: {m.motion.evidence}" if m.motion is not None and advances else m.fact
        return End("working", fact, proves_work=m.proves_work)
    if m.state == "spinning":
        said = m.motion.proof_fact if m.proves_hang and m.motion is not None else None
        return End("spinning", said or f"{subject.label()} spins at {subject.cpu_text()}", proves_hang=said is not None)
    if m.state == "looping":  # it sleeps and wakes in a loop with no way out, and nothing else of it runs Python
        return End("looping", f"{subject.label()} is {m.fact}", proves_hang=True)
    if m.state == "blocked":
        held = proof.unreleasable(subject, st)  # the wait nothing can release, in the proof's own words
        said = (
            held.fact if held is not None else f"{subject.label()} is blocked ({st.wait_text}) at {subject.cpu_text()}"
        )
        return End("blocked", said, proves_hang=held is not None)
    if m.state == "stopped":
        return End("stopped", f"{subject.label()} is stopped", proves_hang=True)
    if m.state in ("asleep", "long_sleep"):
        return _asleep(scene, subject, st, limit_s)
    return End(m.state, None)


def _asleep(scene: Scene, subject: ProcessView, st: ThreadView, limit_s: float | None) -> End:
    """A rank asleep away from the collective: on a timer (the kernel's time left, else the literal in its code) that
    ends after the collective gives up (``limit_s``, or torch's defaults and --max-slow where no recorder told the
    group's timeout) it can never arrive."""
    at = st.user_frame or (st.frames[0] if st.frames else None)
    # a sleep's timer (a timed futex wait may be ended sooner by another thread)
    left = st.last.wakes_in if st.last is not None and st.last.syscall in sg.SLEEP_SYSCALLS else None
    timer = left if left is not None else sg.sleep_timer(at.code if at is not None else None)
    if timer is None:
        return End("asleep")
    fact = f"{subject.label()} sleeps at {describe(at)} on a timer that ends in {duration_text(timer)}" + (
        "" if left is not None else " at most (its code's literal; when the sleep began was not read)"
    )
    if limit_s is not None and left is not None and left > limit_s:  # the kernel's time left, not the literal
        fact += (
            f", after the collective the others wait in gives up ({duration_text(limit_s)}, the process "
            "group's timeout): it can never arrive in time"
        )
        return End("long_sleep", fact, proves_hang=True)
    if limit_s is None and timer > DEFAULT_PG_TIMEOUT_S["nccl"]:  # no recorder told the group's own timeout
        fact += (
            "; torch's default process-group timeout is 10 min (NCCL) or 30 min (gloo): unless this job set "
            "a longer one, the others give up first"
        )
        # Past the longer default and past the job's --max-slow too, on the kernel's own timer: whatever
        # timeout the job set, the outcome is known now (the others fail first, or --max-slow ends it).
        bound = max(DEFAULT_PG_TIMEOUT_S.values(), default=0.0)
        if left is not None and left > max(bound, timer_bound(scene.evidence)):
            fact += f", and after --max-slow ({duration_text(timer_bound(scene.evidence))}) too"
            return End("long_sleep", fact, proves_hang=True)
    return End("asleep", fact)
