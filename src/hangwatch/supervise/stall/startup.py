"""Startup probing: before the first progress signal, a job is captured every --min-stall seconds.

- Nothing moves and the stacks match a stuck signature: hung now, not at the end of --startup-grace.
- Nothing moves and nothing is recognised, STILL_PROBES probes in a row: hung too (cause as found,
  often `unknown`, with the stacks). Not knowing why is no reason to wait the whole grace.
- Anything alive keeps the grace: compiling, loading, a download or read delivering bytes, CPU burning,
  a process waking up (a poll, a retry), a main thread in sleep() (a timer will wake it), and a rank
  that works while the others wait for it at a barrier.
- A rendezvous waiting for peers is `waiting`: the run loop bounds it by --rendezvous-timeout (other
  nodes may start late).

``startup_decision`` is pure: the decision from a diagnosis. ``StartupProbe`` runs it on the job."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from hangwatch.causes import Cause
from hangwatch.records.run import EventKind
from hangwatch.records.values import frozen
from hangwatch.supervise.attempt import Declare, LookAt
from hangwatch.supervise.progress.detector import EARLY_LOOK_S, State
from hangwatch.supervise.stall.judgement import Judgement, someone_could_end
from hangwatch.supervise.stall.look import Look, Unseen

if TYPE_CHECKING:
    from hangwatch.diagnose import Diagnosis
    from hangwatch.supervise.attempt import Attempt, Outcome
    from hangwatch.supervise.context import RunContext
    from hangwatch.supervise.stall.suspect import SuspectJudge

# Signatures that mean stuck before the first step (the rules already require that the culprit
# did not move): a DataLoader waiting on its first batch with its workers blocked, a lock or
# deadlock, a stopped process, a prompt nobody answers.
# child.wait is left out: a non-Python child (tar, wget, a compiler) has no stack that could be seen
# moving, and a startup that runs one is usually alive; it is caught by STILL_PROBES if it stays still.
STUCK_AT_START = frozenset(
    {
        Cause.DATALOADER_WORKER_STUCK,
        Cause.DATALOADER_BATCH_LOST,
        Cause.FORK_INHERITED_LOCK,
        Cause.CODE_DEADLOCK,
        Cause.PROCESS_STOPPED,
        Cause.PROCESS_WAITS_FOR_INPUT,
        Cause.IO_LOCK_WAIT,
    }
)  # hung: its holder does not work (the waiter polls)
STILL_PROBES = 3  # probes in a row that find nothing moving and no progress: hung, whatever the cause


@frozen
class ProbeDecision:
    """What a startup probe found: hung now, or keep waiting (and why, for the status line)."""

    hung: bool
    note: str  # "alive (compile.in_progress)", "stuck: code.deadlock", "not moving (unknown), probe 2 of 3"
    still: int = 0  # probes in a row, this one included, in which nothing moved


def startup_decision(
    diagnosis: Diagnosis, moved: str | None, still_before: int = 0, activity: str | None = None, early: bool = False
) -> ProbeDecision:
    """The decision of one startup probe; ``moved``: what arrived while the job was captured;
    ``still_before``: how many probes in a row before this one found nothing moving; ``activity``:
    what in the job moves or will by itself (CPU, data, wake-ups, a sleep), None when nothing does;
    ``early``: a probe sooner than --min-stall, where only a proof of a hang decides (and nothing counts
    towards the probes in a row that find nothing moving, which keep their --min-stall spacing)."""
    from hangwatch.records.incident import Verdict

    root = diagnosis.root
    if moved is not None:
        return ProbeDecision(False, f"alive ({moved})", 0 if not early else still_before)
    if diagnosis.verdict == Verdict.WAITING:
        return ProbeDecision(False, f"waiting ({root.cause})", still_before if early else 0)
    if diagnosis.verdict in (Verdict.HUNG, Verdict.STOPPED) and root.proves_hang:
        return ProbeDecision(True, f"proven stuck: {root.cause}", still_before + 1)
    if early:
        return ProbeDecision(
            False, f"looked early ({diagnosis.verdict.value}, {root.cause}): no proof of a hang", still_before
        )
    if diagnosis.verdict == Verdict.HUNG and root.cause in STUCK_AT_START:
        return ProbeDecision(True, f"stuck: {root.cause}", still_before + 1)
    if diagnosis.verdict == Verdict.HUNG and activity is not None:
        return ProbeDecision(False, f"not stuck ({root.cause}): {activity}")
    if diagnosis.verdict == Verdict.HUNG:
        still = still_before + 1
        if still >= STILL_PROBES:
            return ProbeDecision(True, f"not moving for {still} probes in a row ({root.cause})", still)
        return ProbeDecision(False, f"not moving ({root.cause}), probe {still} of {STILL_PROBES}", still)
    return ProbeDecision(False, f"alive ({root.cause})")


def next_probe_after(since: float, min_stall: float) -> float:
    """When the next startup probe comes, in seconds from launch. Before --min-stall, probes decide on proof only
    and double their gap (15 s, 30 s, 60 s): a job that reaches its hang just after the first look (two ranks
    still importing torch) is proven at the next, not a whole --min-stall later. From --min-stall on, one
    every --min-stall."""
    if since < min_stall:
        return min(min_stall, max(EARLY_LOOK_S, since) * 2)
    return (int(since // min_stall) + 1) * min_stall


class StartupProbe:
    """Probes a starting job every --min-stall seconds, within --startup-grace."""

    def __init__(self, ctx: RunContext, suspects: SuspectJudge) -> None:
        self.ctx, self.suspects = ctx, suspects

    def due(self, a: Attempt, now: float, still: bool = False) -> bool:
        """Whether a probe is due: the job shows no progress yet, within its grace (``still``: one the kernel's
        view of a still job calls for, whenever it comes)."""
        return (
            a.detector.state == State.STARTING
            and (still or a.startup.next_probe_at <= now)
            and now < a.started_at + self.ctx.cfg.startup_grace
        )

    def probe(self, a: Attempt, now: float, still: bool = False) -> Outcome:
        """starting, no progress signal yet: capture; hung now if nothing moves and a stuck signature
        matches, else keep the startup grace (compiling, loading, a rendezvous waiting for peers). A probe the
        kernel's view of a still job called for (``still``) decides on proof only, and leaves the probes' own
        schedule and their count of still probes as they were."""
        ctx = self.ctx
        since = now - a.started_at
        early = since < ctx.cfg.min_stall or still or ctx.cfg.blind  # blind: its progress cannot be read, proof decides
        if not still:
            a.startup.next_probe_at = a.started_at + next_probe_after(since, ctx.cfg.min_stall)
        return LookAt(None, functools.partial(self._probe_seen, a, now, since, early, still))

    def _probe_seen(
        self, a: Attempt, now: float, since: float, early: bool, still: bool, seen: Look | Unseen
    ) -> Outcome:
        """The probe's look, taken: hung now on a stuck signature with nothing moving, else the grace goes on."""
        ctx = self.ctx
        if isinstance(seen, Unseen):
            return None
        evidence, diagnosis, moved = seen.evidence, seen.diagnosis, seen.moved
        from hangwatch.diagnose.engine import what_moves
        from hangwatch.records.incident import Verdict

        decision = startup_decision(
            diagnosis, moved, a.startup.still_probes, what_moves(evidence, diagnosis.graph), early
        )
        if still and decision.hung and someone_could_end(diagnosis):  # a prompt: the clock's probe decides it
            note = f"looked early ({diagnosis.root.cause}): a person could still answer"
            decision = ProbeDecision(False, note, a.startup.still_probes)
        a.startup.still_probes = decision.still
        a.startup.note = f"probed at {since:.0f} s, {decision.note}"
        ctx.rundir.event(
            EventKind.PROBE,
            attempt=a.number,
            seconds=round(since, 1),
            hung=decision.hung,
            verdict=diagnosis.verdict.value,
            cause=diagnosis.root.cause,
            note=decision.note,
            still=decision.still,
            early=early,
            trigger="still" if still else "clock",
        )
        if a.detector.state != State.STARTING:
            return None
        if (
            moved is None
            and diagnosis.verdict == Verdict.WAITING
            and diagnosis.root.cause == Cause.DISTRIBUTED_RENDEZVOUS_WAIT
        ):
            return self.suspects.peers_late(Judgement(a, evidence, diagnosis, now, since))
        if not decision.hung:
            return None
        return Declare(Judgement(a, evidence, diagnosis, now, since))
