"""Progress intake: the job's output tail and its heartbeat slots, turned into progress signals once
per poll of the run loop."""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import field
from pathlib import Path

from hangwatch.records.layout import BEAT_SUFFIX
from hangwatch.records.values import frozen, mutable
from hangwatch.supervise.progress.counters import (
    ANSI,
    MAX_RECORD,
    RECORD_SPLIT,
    TAIL_RECORDS,
    TIME,
    OutputTail,
    ProgressParser,
    parse_record,
)
from hangwatch.supervise.progress.detector import Progress, Strength
from hangwatch.supervise.progress.heartbeat import Heartbeat, read_heartbeats

log = logging.getLogger(__name__)
RECENT_RECORDS = 64
DIGITS = re.compile(rb"\d+")


@frozen
class RankProgress:
    """A rank's newest progress: when, which step, and what must change for it to count again."""

    at: float
    step: int | None
    key: bytes


@frozen
class Intake:
    """What one poll found: progress signals in order, and the phase a heartbeat declared."""

    signals: tuple[Progress, ...]
    phase: str | None = None
    phase_deadline: float | None = None
    phase_started: float | None = None
    fresh_output: bool = False  # a record not seen recently (times, rates and losses masked): visible movement


MAX_EVENTS = 64  # of one heartbeat signal: a poll never stands for more of the job's steps than this


def _events(hb: Heartbeat, beats_seen: int | None, step_seen: int | None) -> int:
    """The job's steps since the last poll that read this process's slot: its step's advance, else its beats'
    (a phase's enter and leave beat too: steps say it better); one for a process seen for the first time (its
    earlier beats are no interval of this run's)."""
    if hb.step is not None and step_seen is not None and hb.step > step_seen:
        return min(MAX_EVENTS, hb.step - step_seen)
    if hb.step is None and beats_seen is not None and hb.count > beats_seen:
        return min(MAX_EVENTS, hb.count - beats_seen)
    return 1


@mutable
class ProgressIntake:
    """Reads the output tail (filled by the pump threads) and the heartbeat slots."""

    regex: re.Pattern[str] | None
    heartbeat_dir: Path
    tail: OutputTail = field(default_factory=OutputTail)
    counter_total: int | None = None  # the N of the newest `n/N` counter (any bar: a weak total)
    trainer_total: int | None = None  # the trainer's max steps, from autobeat's heartbeats
    ranks: dict[int, RankProgress] = field(default_factory=dict)
    _parser: ProgressParser = field(init=False)
    _tail_seq: int = 0
    _beats: dict[int, int] = field(default_factory=dict)  # pid -> beat count seen
    _steps: dict[int, int] = field(default_factory=dict)  # pid -> the step its newest beat said
    _recent: OrderedDict[tuple[bytes, tuple[int | None, ...]], None] = field(default_factory=OrderedDict)
    _lines: OrderedDict[bytes, None] = field(default_factory=OrderedDict)  # the newest records, digits masked
    _texts: OrderedDict[bytes, None] = field(default_factory=OrderedDict)  # the newest records, the wall clock masked
    _total_seen: int = 0  # the output's bytes up to the last poll
    # Unix times (output chunks, heartbeats) onto the run loop's clock, which never steps (Clock.from_wall).
    to_clock: Callable[[float], float] = field(default=lambda t: t)

    def __post_init__(self) -> None:
        self._parser = ProgressParser(self.regex)

    def on_chunk(self, data: bytes, at: float) -> None:
        """Pump thread: keep the newest output (read at Unix time ``at``) for the next poll."""
        self.tail.add(data, self.to_clock(at))

    def new_attempt(self) -> None:
        """A new attempt starts with no heartbeats and no per-rank progress."""
        for hb in self.heartbeat_dir.glob(f"*{BEAT_SUFFIX}"):
            hb.unlink(missing_ok=True)
        self._beats.clear()
        self._steps.clear()
        self.ranks.clear()
        self._texts.clear()  # (a restart prints its first lines again: each is news in that attempt)
        self.counter_total = self.trainer_total = None

    def poll(self) -> Intake:
        """Progress since the last poll: output, counters, heartbeats."""
        signals: list[Progress] = []
        fresh = False
        seq, at, data = self.tail.snapshot()
        if seq != self._tail_seq:
            self._tail_seq = seq
            fresh = self._fresh(data)
            total = self.tail.total  # (read after the snapshot: bytes added meanwhile only widen what is judged)
            added, self._total_seen = total - self._total_seen, total
            repeat = self._repeat(data, added, time.time()) and not fresh
            signals.append(Progress(at, None, "output", Strength.OUTPUT, fresh=fresh, repeat=repeat))
            counter = self._counters(at, data)
            if counter is not None:
                signals.append(counter)
        phase, beats = self._beats_since()
        if beats:
            # One signal per poll, however many processes beat: the ranks of one job beat the same steps
            # a moment apart, and those moments are no interval of the job's own.
            steps = [b.step for b in beats if b.step is not None]
            signals.append(
                Progress(
                    max(b.at for b in beats),
                    max(steps) if steps else None,
                    "heartbeat",
                    Strength.HEARTBEAT,
                    max(b.count for b in beats),  # the ranks beat the same steps: the most any one beat
                )
            )
        return Intake(tuple(signals), phase[0], phase[1], phase[2], fresh)

    def _counters(self, at: float, data: bytes) -> Progress | None:
        """The output's newest counter (one interval a poll: a parsed counter's jump may be another bar's, samples
        not steps) as a signal, and each rank's counter kept."""
        try:
            counter = self._parser.latest(data)
            by_rank = self._parser.by_rank(data)
        except Exception:  # a parser bug must not stop supervision: logged, and this poll has no counter
            log.exception("progress parser failed")
            counter, by_rank = None, {}
        for rank, c in by_rank.items():
            prev = self.ranks.get(rank)
            if prev is None or prev.key != c.key:
                self.ranks[rank] = RankProgress(at, c.step, c.key)
        if counter is None:
            return None
        if counter.total is not None:
            self.counter_total = counter.total
        return Progress(at, counter.step, counter.source, Strength.COUNTER)

    def _beats_since(self) -> tuple[tuple[str | None, float | None, float | None], list[Progress]]:
        """The heartbeats that came since the last poll (one signal per beating process), and the newest phase a
        heartbeat declared (name, deadline, start); each rank's beat and the trainer's total kept."""
        phase: tuple[str | None, float | None, float | None] = (None, None, None)
        beats: list[Progress] = []
        for hb in (h.on_clock(self.to_clock) for h in read_heartbeats(self.heartbeat_dir)):
            seen, step_seen = self._beats.get(hb.pid), self._steps.get(hb.pid)
            if hb.count != (seen or 0):
                self._beats[hb.pid] = hb.count
                if hb.step is not None:
                    self._steps[hb.pid] = hb.step
                if hb.rank is not None:
                    self.ranks[hb.rank] = RankProgress(hb.at, hb.step, str(hb.count).encode())
                beats.append(Progress(hb.at, hb.step, "heartbeat", Strength.HEARTBEAT, _events(hb, seen, step_seen)))
            if hb.total is not None and hb.step is not None:
                self.trainer_total = hb.total  # the trainer's max steps, in the beats' own unit (optimizer steps)
            if hb.phase is not None:
                phase = (hb.phase, hb.phase_deadline, hb.phase_started)
        return phase, beats

    def _fresh(self, tail: bytes) -> bool:
        """Whether the newest records hold one not seen recently. Times, rates and losses are masked,
        so a progress bar that only redraws its clock is not movement; a new count or message is. A last record that
        is the start of one seen recently (its digits masked), with no line end after it, is a line a read cut, not
        a new one (a crash loop's traceback read half written)."""
        fresh = False
        records = RECORD_SPLIT.split(tail)[-TAIL_RECORDS:]
        for n, rec in enumerate(records):
            if not rec.strip():
                continue
            text = ANSI.sub(b"", rec)
            masked = DIGITS.sub(b"#", text)
            if n == len(records) - 1 and any(
                len(seen) > len(masked) and seen.startswith(masked) for seen in self._lines
            ):
                continue
            self._lines[masked] = None
            template, fields = parse_record(text)
            key = (template, tuple(f.value for f in fields))
            if key not in self._recent:
                fresh = True
                self._recent[key] = None
            for kept in (self._recent, self._lines):
                while len(kept) > RECENT_RECORDS:
                    kept.popitem(last=False)
        return fresh

    def _repeat(self, tail: bytes, added: int, now: float) -> bool:
        """Whether the ``added`` bytes that came since the last poll (at the end of ``tail``) are only records seen
        recently, word for word but a date and a time of day that are the wall clock's at ``now`` (a poll that logs
        `INFO waiting for /data/ready` each second). Not where those bytes, or the record they continue, are not all
        in the tail (a line longer than it), nor where they hold no record but blank ones; a time that is not now
        (`decoded frame at 00:01:24`) is a word like any other."""
        start = len(tail) - added
        begin = max(tail.rfind(b"\n", 0, start), tail.rfind(b"\r", 0, start)) + 1 if start >= 0 else 0
        if start < 0 or (begin == 0 and self.tail.total > len(tail)):
            return False  # (the new bytes, or the record they continue, began before the tail)
        records = [r for r in RECORD_SPLIT.split(tail[begin:]) if r.strip()]
        texts = [_clock_masked(ANSI.sub(b"", r[:MAX_RECORD]), now).strip() for r in records]
        repeat = bool(texts) and all(t in self._texts for t in texts)
        for t in texts:
            self._texts[t] = None
            while len(self._texts) > RECENT_RECORDS:
                self._texts.popitem(last=False)
        return repeat

    def rank_progress(self) -> tuple[tuple[int, float, int | None], ...]:
        """(rank, at, step) for each rank seen, for the evidence."""
        return tuple((r, p.at, p.step) for r, p in sorted(self.ranks.items()))


CLOCK_SLACK_S = 300.0  # a stamp this near the wall clock at the poll is the clock's (a record logged before it)


def _clock_masked(text: bytes, now: float) -> bytes:
    """``text`` with each date (`2026-12-07`) and time of day (`18:00:01,123`) that is the wall clock's at ``now``
    (local or UTC, within ``CLOCK_SLACK_S``) masked: a logger's stamp; any other (`frame at 00:01:24`) kept."""
    clocks = (time.localtime(now), time.gmtime(now))
    dates = {time.strftime(f, c).encode() for c in clocks for f in ("%Y-%m-%d", "%Y/%m/%d")}
    days = [c.tm_hour * 3600 + c.tm_min * 60 + c.tm_sec for c in clocks]

    def masked(m: re.Match[bytes]) -> bytes:
        token = m.group(0).strip().rstrip(b"T")
        parts = token.replace(b",", b".").split(b".")[0].split(b":")
        if token in dates:
            return b" ~ "
        if len(parts) < 2 or not all(map(bytes.isdigit, parts)):
            return m.group(0)
        of_day = sum(int(p) * unit for p, unit in zip(parts, (3600, 60, 1), strict=False))
        near = any(min(abs(d - of_day), 86400 - abs(d - of_day)) <= CLOCK_SLACK_S for d in days)
        return b" ~ " if near else m.group(0)

    return TIME.sub(masked, text)
