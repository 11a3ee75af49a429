"""Progress counters in a job's output: tqdm, rich, Lightning, HF Trainer, Keras, `step N`, ...

Only the last few records (lines or ``\\r`` redraws) of the newest output are parsed, once per
supervisor poll: the newest counter is all detection needs, and the cost does not grow with how
much a job prints.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
RECORD_SPLIT = re.compile(rb"[\r\n]+")
TAIL_RECORDS = 6
TAIL_BYTES = 8192
RANK_RECORDS = 64
RANK_PREFIX = re.compile(rb"^\[(?:[A-Za-z_-]*?)(\d+)\]:\s?")
DIGIT = re.compile(rb"\d")

# (source, pattern). The first pattern that matches a record wins. Group "step" is the counter.
PATTERNS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    # tqdm and everything built on it (Lightning, HF Trainer, accelerate): "45/100 [00:05<00:06, 8.9it/s]"
    ("tqdm", re.compile(rb"(?P<step>\d+)/(?P<total>\d+|\?)\s*\[\d")),
    # Keras 2 "45/100 [=====>....] - ETA" and Keras 3 "45/100 ━━━━━━━ 3s 30ms/step"
    ("keras", re.compile(rb"(?P<step>\d+)/(?P<total>\d+)\s+(?:\[[=>.]+\]|\xe2\x94\x81)")),
    # rich progress: "━━━━━━━━╸━━━━━━━ 45/100"
    ("rich", re.compile(rb"\xe2\x94[\x81\xb8\xba][\xe2\x94\x81\xb8\xba ]*\s+(?P<step>\d+)/(?P<total>\d+)")),
    # HF Trainer log dict: "{'loss': 2.31, 'grad_norm': ..., 'epoch': 0.5}"
    ("hf_trainer", re.compile(rb"\{'loss': [-\d.e]+.*'epoch': (?P<epoch>[\d.]+)")),
    ("step", re.compile(rb"(?i)\b(?:global[_ ]step|step|iter(?:ation)?|batch)\s*[:=#]?\s*(?P<step>\d+)")),
    ("epoch", re.compile(rb"(?i)\bepoch\s*[:=#]?\s*(?P<epoch>\d+)")),
    ("fraction", re.compile(rb"(?<![\d/.:-])(?P<step>\d+)\s*/\s*(?P<total>\d+)(?![\d/.:-])")),
)


@dataclass(frozen=True)
class Counter:
    """A progress counter found in the output."""
    source: str
    step: int | None
    key: bytes  # what must change for this to count as progress
    total: int | None = None


class OutputTail:
    """The newest bytes of a job's output, kept by the pump threads for the supervisor to parse.

    A pump only appends (cheap, per chunk); the supervisor parses at its own pace (per poll), so
    parsing costs the same whatever the job prints.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data = b""
        self.seq = 0  # bumped on every chunk
        self.last_at = 0.0  # time of the newest chunk

    def add(self, chunk: bytes, at: float) -> None:
        """Keep the newest bytes of a chunk."""
        with self._lock:
            self._data = (self._data + chunk[-TAIL_BYTES:])[-TAIL_BYTES:]
            self.seq += 1
            self.last_at = at

    def snapshot(self) -> tuple[int, float, bytes]:
        """(sequence number, time of the newest chunk, the newest bytes)."""
        with self._lock:
            return self.seq, self.last_at, self._data


class ProgressParser:
    """Finds progress counters in the newest records of a job's output."""
    def __init__(self, extra: re.Pattern[str] | None = None) -> None:
        self._extra = re.compile(extra.pattern.encode(), extra.flags & ~re.UNICODE) if extra else None
        self._last: dict[str, bytes] = {}

    def _match(self, record: bytes) -> Counter | None:
        if self._extra is not None:
            m = self._extra.search(record)
            if m:
                step = m.groupdict().get("step")
                return Counter("regex", int(step) if step and step.isdigit() else None, step or m.group(0))
        if not DIGIT.search(record):
            return None  # every built-in form carries a number
        for source, pat in PATTERNS:
            m = pat.search(record)
            if m:
                d = m.groupdict()
                if d.get("step") is not None:
                    total = d.get("total")
                    return Counter(source, int(d["step"]), d["step"], int(total) if total and total.isdigit() else None)
                return Counter(source, None, d.get("epoch") or m.group(0))
        return None

    def latest(self, tail: bytes) -> Counter | None:
        """The newest counter in the output ``tail``, if it changed since the last one of its source."""
        found: Counter | None = None
        for rec in reversed(RECORD_SPLIT.split(tail)[-TAIL_RECORDS:]):
            if not rec:
                continue
            found = self._match(ANSI.sub(b"", rec))
            if found is not None:
                break
        if found is None or self._last.get(found.source) == found.key:
            return None
        self._last[found.source] = found.key
        return found

    def by_rank(self, tail: bytes) -> dict[int, Counter]:
        """The newest counter of each rank in rank-prefixed output (torchrun --tee: ``[default0]:``,
        or ``[rank0]:``), whether or not it changed."""
        out: dict[int, Counter] = {}
        for rec in reversed(RECORD_SPLIT.split(tail)[-RANK_RECORDS:]):
            m = RANK_PREFIX.match(rec)
            if m is None or int(m.group(1)) in out:
                continue
            c = self._match(ANSI.sub(b"", rec[m.end():]))
            if c is not None:
                out[int(m.group(1))] = c
        return out
