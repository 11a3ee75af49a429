"""Progress counters in a job's output, learned from the log rather than listed.

Each record (a line, or a ``\\r`` redraw) is reduced to a *template*: its words, with every number
masked. Records of the same template are compared: a counter is an integer field that advances
from one record to the next. Names and shapes are priors, not the whole truth: a field called
step/iter/batch/updates, or the ``n`` of an ``n/N`` or ``n of N``, is preferred; dates, times,
floats (losses, rates), percentages and epochs are never the step when a better field exists.
A record seen for the first time yields a step from the priors alone.

Only the newest records of the output tail are parsed, once per supervisor poll: the cost does not
grow with how much a job prints.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict, deque
from itertools import pairwise

from hangwatch.records.values import frozen

ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
RECORD_SPLIT = re.compile(rb"[\r\n]+")
TAIL_RECORDS = 6
TAIL_BYTES = 8192
RANK_RECORDS = 64
MAX_RECORD = 2048  # longer records are cut: a counter sits near the start of a progress line
USER_REGEX_BYTES = 512  # --progress-regex sees at most this much of a record: its cost stays bounded
RANK_PREFIX = re.compile(rb"^\[(?:[A-Za-z_-]*?)(\d+)\]:\s?")
DIGIT = re.compile(rb"\d")

# Dates and times are never counters: they are masked before numbers are read.
TIME = re.compile(
    rb"\d{4}[-/]\d{2}[-/]\d{2}(?:[T ])?"  # 2026-11-22, 2026/11/22
    # 11/22 13:00:01 at a record's start or in brackets (mmengine, detectron2); not rich's `40/40 0:00:04`
    rb"|(?:^|(?<=\[))(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])(?=\s+\d{1,2}:\d{2})"
    rb"|\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d+)?"
)  # 13:00:01.123, 0:00:12, 1:23
# A number not glued to a word (``conv1``, ``I1122``, ``rank0`` are names, not fields). Thousands
# separators (``4,886``, ``1_234``) and exponents are part of the number.
NUMBER = re.compile(rb"(?<![A-Za-z_\d.])(\d{1,3}(?:[,_]\d{3})+(?![\d])|\d+)(\.\d+)?([eE][-+]?\d+)?")
WORD = re.compile(rb"[A-Za-z_][A-Za-z_]*")
# A number glued to a name by a hyphen is part of the name (``ForkPoolWorker-393``, ``Thread-12``,
# ``checkpoint-500``: a process's, a thread's, a directory's; a pool that starts worker after worker counts up in
# its tracebacks' headers, which are no steps), unless the name is a step's (``step-1200``, ``iter-500/1000``).
NAME_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _hyphened(text: bytes, at: int) -> bytes | None:
    """The name glued by a hyphen to the number at ``at`` (``ForkPoolWorker`` of ``ForkPoolWorker-393``), else None;
    read back at most 40 bytes."""
    if at < 2 or text[at - 1] != ord("-"):
        return None
    start = at - 1
    while start > max(0, at - 41) and text[start - 1] in NAME_CHARS:
        start -= 1
    return text[start : at - 1] or None


FRACTION_AFTER = re.compile(rb"(?<!\s)\s*(?:/|of)\s*(\d[\d,_]*)")  # from the start of its spaces: linear
NAME_BEFORE = re.compile(rb"([A-Za-z_][A-Za-z_]*)[:=#\[(|]?\s{0,12}[:=#\[(|]?\s{0,12}$")
UNIT_AFTER = re.compile(rb"(?<!\s)\s*(?:%|it/s|s/it|/s|ms|s\b|MB|GB|GiB|MiB|M\b|G\b)")

STEP_NAMES = frozenset(
    {
        b"step",
        b"steps",
        b"global_step",
        b"globalstep",
        b"iter",
        b"iters",
        b"iteration",
        b"iterations",
        b"it",
        b"batch",
        b"batches",
        b"update",
        b"updates",
        b"num_updates",
        b"train_step",
        b"optimizer_step",
    }
)
WEAK_NAMES = frozenset({b"epoch", b"epochs", b"sample", b"samples", b"consumed", b"tokens", b"seen"})
NOT_COUNTER_NAMES = frozenset(
    {
        b"time",
        b"wall",
        b"train_wall",
        b"elapsed",
        b"eta",
        b"sec",
        b"secs",
        b"seconds",
        b"ms",
        b"tps",
        b"wps",
        b"ups",
        b"wpb",
        b"bsz",
        b"mem",
        b"memory",
        b"max_mem",
        b"rank",
        b"gpu",
        b"seed",
        b"pid",
        b"port",
        b"lr",
        b"loss",
        b"scale",
        b"size",
        b"skipped",
        b"nan",
        b"line",
        b"world",
        b"v_num",
        b"version",
        b"total",
    }
)

PRIOR_STEP, PRIOR_FRACTION, PRIOR_NONE, PRIOR_WEAK = 3.0, 2.0, 0.0, -1.0
HISTORY = 8  # records remembered per template
TEMPLATES = 256  # templates remembered (oldest forgotten first)

# Progress without a counter: an HF Trainer log dict (values may be quoted strings in transformers 5).
HF_DICT = re.compile(rb"""\{'loss': '?[-\d.e]+'?.*'epoch': '?(?P<epoch>[\d.]+)'?""")


@frozen
class Counter:
    """A progress counter found in the output."""

    source: str
    step: int | None
    key: bytes  # what must change for this to count as progress
    total: int | None = None


@frozen
class Field:
    """One number of a record: its value (None: not an integer), name, and how counter-like it looks."""

    value: int | None
    prior: float
    total: int | None
    name: str


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
        self.total = 0  # the bytes of every chunk so far

    def add(self, chunk: bytes, at: float) -> None:
        """Keep the newest bytes of a chunk."""
        with self._lock:
            self._data = (self._data + chunk[-TAIL_BYTES:])[-TAIL_BYTES:]
            self.seq += 1
            self.total += len(chunk)
            self.last_at = at

    def snapshot(self) -> tuple[int, float, bytes]:
        """(sequence number, time of the newest chunk, the newest bytes)."""
        with self._lock:
            return self.seq, self.last_at, self._data


def _int(raw: bytes) -> int:
    return int(raw.replace(b",", b"").replace(b"_", b""))


@functools.lru_cache(maxsize=256)  # every poll reads the newest records twice (movement, counter), and again later
def parse_record(record: bytes) -> tuple[bytes, tuple[Field, ...]]:
    """(template, fields) of one record: the words with numbers masked, and each number."""
    text = TIME.sub(b" ~ ", record[:MAX_RECORD])  # not a word: times leave no name and no template token
    fields: list[Field] = []
    template: list[bytes] = []
    pos = 0
    for m in NUMBER.finditer(text):
        glued = _hyphened(text, m.start())
        if glued is not None and glued.lower() not in STEP_NAMES:
            continue  # a name's number: its digits leave no field and no template token
        template.extend(WORD.findall(text[pos : m.start()]))
        template.append(b"#")
        pos = m.end()
        whole, frac, exp = m.group(1), m.group(2), m.group(3)
        if frac or exp:
            fields.append(Field(None, PRIOR_NONE, None, ""))
            continue
        before = NAME_BEFORE.search(text, max(0, m.start() - 40), m.start())
        name = before.group(1).lower() if before else b""
        after = text[m.end() : m.end() + 24]
        total_m = FRACTION_AFTER.match(after)
        total = _int(total_m.group(1)) if total_m and NUMBER.fullmatch(total_m.group(1)) else None
        unit = UNIT_AFTER.match(after) is not None and total is None
        prev = text[max(0, m.start() - 8) : m.start()].rstrip()
        denominator = prev.endswith(b"/") or prev.endswith(b" of")
        if unit or denominator or name in NOT_COUNTER_NAMES:
            fields.append(Field(_int(whole), -10.0, None, name.decode()))
            continue
        if not name and total is not None:
            post = WORD.match(after[total_m.end() :].lstrip()) if total_m else None
            name = post.group(0).lower() if post else b""
        if name in STEP_NAMES:
            prior = PRIOR_STEP + (0.5 if total is not None else 0.0)
        elif name in WEAK_NAMES:
            prior = PRIOR_WEAK
        elif total is not None:
            prior = PRIOR_FRACTION
        else:
            prior = PRIOR_NONE
        fields.append(Field(_int(whole), prior, total, name.decode() or ("n/N" if total is not None else "")))
    template.extend(WORD.findall(text[pos:]))
    return b" ".join(template), tuple(fields)


class ProgressParser:
    """Finds progress counters in the newest records of a job's output, learning each log's template."""

    def __init__(self, extra: re.Pattern[str] | None = None) -> None:
        self._extra = re.compile(extra.pattern.encode(), extra.flags & ~re.UNICODE) if extra else None
        self._last: dict[str, bytes] = {}
        self._history: OrderedDict[tuple[int, bytes], deque[tuple[int | None, ...]]] = OrderedDict()
        self._seen: OrderedDict[tuple[int, bytes], None] = OrderedDict()  # records already learned from

    def _remember(
        self, scope: int, record: bytes, template: bytes, values: tuple[int | None, ...]
    ) -> deque[tuple[int | None, ...]]:
        """The template's history, with this record's values added unless it was learned from before
        (the tail is parsed again at every poll)."""
        seen = (scope, record)
        fresh = seen not in self._seen
        if fresh:
            self._seen[seen] = None
            while len(self._seen) > TEMPLATES * 2:
                self._seen.popitem(last=False)
        key = (scope, template)
        hist = self._history.get(key)
        if hist is None:
            hist = deque(maxlen=HISTORY)
            self._history[key] = hist
            while len(self._history) > TEMPLATES:
                self._history.popitem(last=False)
        else:
            self._history.move_to_end(key)
        if fresh and (not hist or hist[-1] != values):
            hist.append(values)
        return hist

    def _match(self, record: bytes, scope: int) -> Counter | None:
        if self._extra is not None:
            m = self._extra.search(record[:USER_REGEX_BYTES])
            if m:
                step = m.groupdict().get("step")
                return Counter("regex", int(step) if step and step.isdigit() else None, step or m.group(0))
        if not DIGIT.search(record):
            return None
        template, fields = parse_record(record)
        values = tuple(f.value for f in fields)
        hist = self._remember(scope, record, template, values)
        best = self._choose(fields, hist)
        if best is not None:
            f = best
            return Counter(
                f"log:{f.name}" if f.name else "log", f.value, template + b"|" + str(f.value).encode(), f.total
            )
        m = HF_DICT.search(record)
        if m:
            return Counter("hf_trainer", None, m.group("epoch"))
        if len(hist) >= 2 and any(f.prior in (PRIOR_STEP, PRIOR_WEAK) for f in fields):
            # A named counter stands still while the record's other numbers change (a loss line per
            # epoch): the job moves, but this field is not its step.
            return Counter("log", None, template + b"|" + repr(values).encode())
        return None

    @staticmethod
    def _choose(fields: tuple[Field, ...], hist: deque[tuple[int | None, ...]]) -> Field | None:
        """The field that is the counter: one that advances across records of this template, the best
        named first; on a template's first record, the best prior alone."""
        scored: list[tuple[float, int, Field]] = []
        for i, f in enumerate(fields):
            if f.value is None or f.prior <= -10.0:
                continue
            series: list[int] = [x for v in hist if len(v) > i and (x := v[i]) is not None]
            ups = sum(1 for a, b in pairwise(series) if b > a)
            downs = sum(1 for a, b in pairwise(series) if b < a)
            if ups > downs:
                scored.append((10.0 + f.prior, -i, f))
            elif len(series) <= 1 and f.prior >= PRIOR_FRACTION:
                scored.append((f.prior, -i, f))
            elif ups == 0 and downs == 0 and f.prior >= PRIOR_FRACTION and len(series) >= 2:
                scored.append((f.prior - 5.0, -i, f))  # a named counter that has not moved (yet)
        if not scored:
            return None
        return max(scored, key=lambda s: (s[0], s[1]))[2]

    def latest(self, tail: bytes) -> Counter | None:
        """The newest counter in the output ``tail``, if it changed since the last one of its source."""
        found: Counter | None = None
        records = [r for r in RECORD_SPLIT.split(tail)[-TAIL_RECORDS:] if r]
        for rec in records:  # oldest first: each template's history stays in order
            c = self._match(ANSI.sub(b"", rec), -1)
            if c is not None:
                found = c
        if found is None or self._last.get(found.source) == found.key:
            return None
        self._last[found.source] = found.key
        return found

    def by_rank(self, tail: bytes) -> dict[int, Counter]:
        """The newest counter of each rank in rank-prefixed output (torchrun --tee: ``[default0]:``,
        or ``[rank0]:``), whether or not it changed."""
        out: dict[int, Counter] = {}
        for rec in RECORD_SPLIT.split(tail)[-RANK_RECORDS:]:
            m = RANK_PREFIX.match(rec)
            if m is None:
                continue
            rank = int(m.group(1))
            c = self._match(ANSI.sub(b"", rec[m.end() :]), rank)
            if c is not None:
                out[rank] = c
        return out
