"""Progress counters in a job's output: tqdm, rich, Lightning, HF Trainer, Keras, `step N`, ...

Only the last few records (lines or ``\\r`` redraws) of each chunk are parsed: the newest counter
is all detection needs, and the cost stays per chunk, not per byte, however much a job prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
RECORD_SPLIT = re.compile(rb"[\r\n]+")
TAIL_RECORDS = 6
CARRY_MAX = 4096

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
    source: str
    step: int | None
    key: bytes  # what must change for this to count as progress
    total: int | None = None


class ProgressParser:
    def __init__(self, extra: re.Pattern[str] | None = None) -> None:
        self._extra = re.compile(extra.pattern.encode(), extra.flags & ~re.UNICODE) if extra else None
        self._carry = b""
        self._last: dict[str, bytes] = {}

    def _match(self, record: bytes) -> Counter | None:
        if self._extra is not None:
            m = self._extra.search(record)
            if m:
                step = m.groupdict().get("step")
                return Counter("regex", int(step) if step and step.isdigit() else None, step or m.group(0))
        for source, pat in PATTERNS:
            m = pat.search(record)
            if m:
                d = m.groupdict()
                if d.get("step") is not None:
                    total = d.get("total")
                    return Counter(source, int(d["step"]), d["step"], int(total) if total and total.isdigit() else None)
                return Counter(source, None, d.get("epoch") or m.group(0))
        return None

    def feed(self, chunk: bytes) -> Counter | None:
        """The newest counter in ``chunk`` if it changed since the last one of its source."""
        data = self._carry + chunk
        records = RECORD_SPLIT.split(data)
        self._carry = records[-1][-CARRY_MAX:]  # an incomplete record continues in the next chunk
        found: Counter | None = None
        for rec in reversed(records[-TAIL_RECORDS - 1:]):
            if not rec:
                continue
            c = self._match(ANSI.sub(b"", rec))
            if c is not None:
                found = c
                break
        if found is None or self._last.get(found.source) == found.key:
            return None
        self._last[found.source] = found.key
        return found
