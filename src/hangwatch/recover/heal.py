"""Heal in place (``--on-hang heal``): a DataLoader worker that hangs is replaced inside the job, with no restart.

hangwatch asks; the job's startup hook acts (``_Healer`` in hangwatch/_autobeat/_hangwatch_hook/heal.py). The ask is a
JSON file beside the iterator's batch record (``heartbeat/<pid>-<n>.heal``: seq, worker, pid, batch, sample, why),
written atomically; the job's main process reads it while it waits for a batch in torch's own polling loop, replaces
the worker (torch's worker loop, the iterator's own arguments: the same worker id, seed and worker_init_fn), hands
the new one the batches the old one held, in order, and answers with one JSON line in ``<pid>-<n>.heals``. A batch
that hangs again is handed without the sample the capture named (or dropped where none was named or none is left),
and that sample is left out of the dataset's later batches. A worker that died is replaced the same way, unasked.

What heal cannot do is said and the job is restarted instead: a finding that is not a worker's, an IterableDataset
(a fresh worker cannot take up another's position), a DataLoader whose batches were not recorded (no hook, another
torch), --max-heals used up, or no answer within ``ANSWER_S`` (the main process is not waiting for a batch).
docs/restarts.md#heal-in-place says it for users.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hangwatch.atomic import write_text_atomic
from hangwatch.capture.loader import read_loader_file
from hangwatch.causes import Cause
from hangwatch.records.layout import HEAL_ANSWERS_SUFFIX, HEAL_REQUEST_SUFFIX, LOADER_SUFFIX
from hangwatch.records.values import frozen

if TYPE_CHECKING:
    from hangwatch.records.evidence import Evidence
    from hangwatch.records.incident import Finding

HEALABLE = frozenset({Cause.DATALOADER_WORKER_STUCK, Cause.DATALOADER_WORKER_SLOW})
ANSWER_S = 15.0  # the job answers within about a second while it waits for a batch; ending the worker takes <= 4 s


@frozen
class HealAsk:
    """What hangwatch asks the job to heal: worker ``worker`` (pid ``pid``) of the iterator recorded in ``record``,
    which holds batch ``batch``; ``sample``: the sample index the capture found it on, if any."""

    seq: int
    worker: int
    pid: int
    batch: int
    sample: int | None
    sample_text: str | None  # what the sample is, where the dataset's locals showed it
    dataset: str
    record: Path  # heartbeat/<pid>-<n>.dl
    why: str

    @property
    def request_path(self) -> Path:
        """Where the ask is written: beside the record."""
        return self.record.with_name(self.record.name[: -len(LOADER_SUFFIX)] + HEAL_REQUEST_SUFFIX)

    def plan_text(self, again: bool) -> str:
        """What the incident says heal does (``again``: this batch was healed before in this attempt)."""
        what = f"the sample {self.sample_text}" if self.sample_text else "no sample named"
        who = f"DataLoader worker {self.worker} (pid {self.pid}) is replaced inside the job"
        if again and self.sample is not None:
            return (
                f"heal: batch {self.batch} hung before; {who} and handed it without sample {self.sample} ({what}), "
                "which is left out from now on"
            )
        if again:
            return f"heal: batch {self.batch} hung before, and no sample was named: {who}, and the batch dropped"
        return (
            f"heal: {who} and handed batch {self.batch} again; if it hangs again, without the sample it is on ({what})"
        )

    def write(self) -> None:
        """The ask, written atomically (the job reads it whole or not at all)."""
        body = {
            "asked_at": time.time(),  # the job acts on it only while hangwatch waits for its answer
            "good_for": ANSWER_S,
            "seq": self.seq,
            "worker": self.worker,
            "pid": self.pid,
            "batch": self.batch,
            "sample": self.sample,
            "why": self.why,
        }
        write_text_atomic(self.request_path, json.dumps(body))


def plan(root: Finding, evidence: Evidence, heartbeat_dir: Path, seq: int, left: int, allowed: int) -> HealAsk | str:
    """The heal for this hang, or why there is none (one sentence: hangwatch restarts instead)."""
    from hangwatch.diagnose.workers import sample_in

    if root.cause not in HEALABLE:
        return f"it is not a DataLoader worker's hang ({root.cause}), and heal replaces workers only"
    if left <= 0:
        return f"the {allowed} heal(s) allowed (--max-heals) are used up"
    pid = root.where.pid if root.where is not None else None
    ev = next((p for p in evidence.processes if p.info.pid == pid), None)
    task = ev.loader_task if ev is not None else None
    if ev is None or task is None or task.from_locals:  # read from the worker's locals: no record to heal from
        return (
            "its DataLoader's batches were not recorded (the startup hook is off, this torch's DataLoader is not "
            "one it knows, or its main process was not waiting for a batch when it was captured)"
        )
    if task.iterable:
        return "its dataset is an IterableDataset: a fresh worker cannot take up another worker's position in it"
    if not task.healable:
        return (
            "heal is off for its DataLoader (in_order=False, --max-heals used up in the job, or a torch whose worker "
            "loop the startup hook does not know)"
        )
    if task.batch < 0:
        return "the worker holds no batch: there is nothing to hand a fresh one"
    record = next((p for p in sorted(heartbeat_dir.glob(f"*{LOADER_SUFFIX}")) if _holds(p, task.worker_pid)), None)
    if record is None:
        return "its DataLoader's record is gone (the iterator ended while it was captured)"
    sample, text = sample_in(ev.locals, task)
    why = "slow past --max-slow" if root.cause == Cause.DATALOADER_WORKER_SLOW else "stuck"
    return HealAsk(seq, task.worker_id, task.worker_pid, task.batch, sample, text, task.dataset, record, why)


def _holds(record: Path, worker_pid: int) -> bool:
    """The record is the worker's iterator's: as last written, current or not (a batch that moved since the look
    is the main process's to say: it answers that the worker moved on, and the stall is judged again)."""
    return any(t.worker_pid == worker_pid for t in read_loader_file(record, current=False))


class HealAnswers:
    """The job's answers (``heartbeat/*.heals``, one JSON line each), read as they come: each line once. One per
    attempt (the files are removed before each launch)."""

    def __init__(self, heartbeat_dir: Path) -> None:
        self.dir = heartbeat_dir
        self.read_to: dict[Path, int] = {}  # path -> bytes read

    def new(self) -> list[dict[str, Any]]:
        """Answers written since the last call (a line not yet whole waits for the next call)."""
        out: list[dict[str, Any]] = []
        for path in sorted(self.dir.glob(f"*{HEAL_ANSWERS_SUFFIX}")):
            try:
                with open(path, "rb") as f:
                    start = self.read_to.get(path, 0)
                    if start > os.fstat(f.fileno()).st_size:
                        start = 0  # written again from the start
                    f.seek(start)
                    data = f.read()
            except OSError:
                continue
            whole = data[: data.rfind(b"\n") + 1]
            self.read_to[path] = start + len(whole)
            for line in whole.splitlines():
                try:
                    answer = json.loads(line)
                except ValueError:
                    continue
                if isinstance(answer, dict):
                    out.append(answer)
        return out


def said(answer: dict[str, Any], sample_text: str | None = None) -> str:
    """The line a user reads about one heal the job did."""
    w, old, new, batch = answer.get("worker"), answer.get("old_pid"), answer.get("pid"), answer.get("batch")
    head = f"DataLoader worker {w} (pid {old}, {answer.get('why') or 'stuck'}) was replaced inside the job by pid {new}"
    action = answer.get("action")
    if batch is None:
        return f"{head}; it held no batch"
    if action == "skipped":
        what = f" ({sample_text})" if sample_text else ""
        return (
            f"{head}; batch {batch} hung again, and was handed to it without sample {_join(answer.get('skipped'))}"
            f"{what}, which is left out of {answer.get('dataset') or 'the dataset'} from now on"
        )
    if action == "dropped":
        return f"{head}; batch {batch} hung again and was dropped (samples {_join(answer.get('skipped'))})"
    return f"{head}; batch {batch} and the ones after it were handed to it again"


def _join(xs: Any) -> str:
    return ", ".join(str(x) for x in xs) if isinstance(xs, list) else str(xs)
