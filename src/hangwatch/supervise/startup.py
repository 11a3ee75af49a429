"""Startup probing: before the first progress signal, a job is captured every --min-stall seconds.

- Nothing moves and the stacks match a stuck signature: hung now, not at the end of --startup-grace.
- Nothing moves and nothing is recognised, STILL_PROBES probes in a row: hung too (cause as found,
  often `unknown`, with the stacks). Not knowing why is no reason to wait the whole grace.
- Anything alive keeps the grace: compiling, loading, a download or read delivering bytes, CPU burning,
  a process waking up (a poll, a retry), a main thread in sleep() (a timer will wake it), and a rank
  that works while the others wait for it at a barrier.
- A rendezvous waiting for peers is `waiting`: the run loop bounds it by --rendezvous-timeout (other
  nodes may start late).

Pure: the decision from a diagnosis."""

from __future__ import annotations

from dataclasses import dataclass

from hangwatch.diagnose import Diagnosis
from hangwatch.incident import Verdict

# Signatures that mean stuck before the first step (the rules already require that the culprit
# did not move): a DataLoader waiting on its first batch with its workers blocked, a lock or
# deadlock, a stopped process, a prompt nobody answers.
# child.wait is left out: a non-Python child (tar, wget, a compiler) has no stack that could be seen
# moving, and a startup that runs one is usually alive; it is caught by STILL_PROBES if it stays still.
STUCK_AT_START = frozenset({"dataloader.worker_stuck", "dataloader.batch_lost", "fork.inherited_lock",
                            "code.deadlock", "process.stopped", "process.waits_for_input"})
STILL_PROBES = 3  # probes in a row that find nothing moving and no progress: hung, whatever the cause


@dataclass(frozen=True)
class ProbeDecision:
    """What a startup probe found: hung now, or keep waiting (and why, for the status line)."""

    hung: bool
    note: str  # "alive (compile.in_progress)", "stuck: code.deadlock", "not moving (unknown), probe 2 of 3"
    still: int = 0  # probes in a row, this one included, in which nothing moved


def startup_decision(diagnosis: Diagnosis, moved: str | None, still_before: int = 0,
                     activity: str | None = None) -> ProbeDecision:
    """The decision of one startup probe; ``moved``: what arrived while the job was captured;
    ``still_before``: how many probes in a row before this one found nothing moving; ``activity``:
    what in the job moves or will by itself (CPU, data, wake-ups, a sleep), None when nothing does."""
    root = diagnosis.findings[0]
    if moved is not None:
        return ProbeDecision(False, f"alive ({moved})")
    if diagnosis.verdict == Verdict.WAITING:
        return ProbeDecision(False, f"waiting ({root.cause})")
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
