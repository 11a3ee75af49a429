"""Startup probing: before the first progress signal, a job is captured every --min-stall seconds.
A job in which nothing moves and whose stacks match a stuck signature is hung now, not at the end
of --startup-grace; anything alive (compiling, loading, downloading) keeps the grace, and so does a
rendezvous waiting for peers (other nodes may start late). Pure: the decision from a diagnosis."""

from __future__ import annotations

from dataclasses import dataclass

from hangwatch.diagnose import Diagnosis
from hangwatch.incident import Verdict

# Signatures that mean stuck before the first step (the rules already require that the culprit
# did not move): a DataLoader waiting on its first batch with its workers blocked, a lock or
# deadlock, a stopped process, a child waiting.
# child.wait is left out: a non-Python child (tar, wget, a compiler) has no stack that could be seen
# moving, and a startup that runs one is usually alive.
STUCK_AT_START = frozenset({"dataloader.worker_stuck", "dataloader.batch_lost", "fork.inherited_lock",
                            "code.deadlock", "process.stopped"})
KEEP_GRACE = frozenset({"distributed.rendezvous_wait"})


@dataclass(frozen=True)
class ProbeDecision:
    """What a startup probe found: hung now, or keep waiting (and why, for the status line)."""

    hung: bool
    note: str  # "alive (compile.in_progress)", "waiting for peers at rendezvous", "stuck: code.deadlock"


def startup_decision(diagnosis: Diagnosis, moved: str | None) -> ProbeDecision:
    """The decision of one startup probe; ``moved``: what arrived while the job was captured."""
    root = diagnosis.findings[0]
    if moved is not None:
        return ProbeDecision(False, f"alive ({moved})")
    if root.cause in KEEP_GRACE:
        return ProbeDecision(False, "waiting for peers at rendezvous: keeping the startup grace")
    if diagnosis.verdict == Verdict.HUNG and root.cause in STUCK_AT_START:
        return ProbeDecision(True, f"stuck: {root.cause}")
    if diagnosis.verdict == Verdict.HUNG:
        return ProbeDecision(False, f"not moving, no stuck signature ({root.cause}): keeping the startup grace")
    return ProbeDecision(False, f"alive ({root.cause})")
