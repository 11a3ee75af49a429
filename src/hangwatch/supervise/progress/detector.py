"""When is a job stalled? An explicit state machine over progress events and the clock.

    starting --first progress--> progressing --no progress for the threshold--> suspect
    suspect --capture says hung--> hung      suspect --capture says alive/slow--> (extended) suspect
    suspect/hung --progress--> progressing (recovered)

The threshold adapts to the job: at least ``min_stall``, and ``multiple`` x a high percentile of
recent progress intervals; ``startup_grace`` before the first progress; a declared phase() has its
own deadline. Pure: no I/O, no clock of its own, so it is tested on scripted sequences.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable
from enum import Enum, IntEnum

from hangwatch.records.values import frozen


class State(str, Enum):
    """The detector's states."""

    STARTING = "starting"
    PROGRESSING = "progressing"
    SUSPECT = "suspect"
    HUNG = "hung"


class Strength(IntEnum):
    """Progress signals in order of strength. Once a stronger one has been seen, weaker ones no
    longer count as progress (a log line from a monitor thread is not a training step), but only
    while the stronger one itself advances: heartbeats that stop while the log's counter goes on
    hand over to the counter."""

    OUTPUT = 1
    COUNTER = 2
    HEARTBEAT = 3


@frozen(kw_only=True)
class DetectorConfig:
    """Thresholds: the user-facing ones are the run's (RunConfig; supervisor.py passes them), the rest fixed."""

    min_stall: float
    startup_grace: float
    max_slow: float  # how long a "slow but alive" job may be extended in total
    history_factor: float
    history_floor: float
    phase_factor: float
    multiple: float = 3.0
    percentile: float = 99.0
    history: int = 256
    min_history: int = 8  # below this many intervals, the longest interval stands in for the percentile

    @classmethod
    def of(cls, run: object, **instead: float) -> DetectorConfig:
        """The run's thresholds (a RunConfig, or anything with the option table's names), each named once: in
        this class's fields without a default; ``instead``: those given otherwise."""
        names = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING]
        return cls(**{**{n: getattr(run, n) for n in names}, **instead})


@frozen
class HistoryBound:
    """When an alive job without progress becomes hung by its own history, and why, in words."""

    at: float  # unix time
    basis: str  # "max(60 s, 100 x the median progress interval of 0.20 s x 2 workers)"


@frozen
class Progress:
    """One progress signal: when, which step (if counted), from where, how strong."""

    at: float
    step: int | None
    source: str
    strength: Strength
    count: int = 1  # the job's own events since the previous signal of this kind (a heartbeat's beats)
    fresh: bool = True  # plain output: a record not seen recently (the same tracebacks again are not)
    repeat: bool = False  # plain output: each record the same as a recent one, word for word but its clock


RATE_POINTS = 21  # the step rate is taken over the newest this many (time, step) points
REDRAW_S = 2.0  # a counter line this soon after the last beat, at the step the counter showed then or the next, is
# the beat's own step drawn again (a trainer's bar updated just after its step), not the counter moving on alone
# The first look at a stalled job: after max(EARLY_LOOK_S, EARLY_LOOK_FACTOR x the 99th-percentile progress
# interval), sooner than --min-stall. Only a proof of a hang decides there
# (docs/stalls.md#what-counts-as-proof-of-a-hang).
EARLY_LOOK_S = 15.0
NO_CLOCK_S = 10 * 365 * 86400.0  # --max-slow of a job whose progress cannot be read (`attach`, blind): no clock
RATE_WINDOW = 20  # step intervals the rate is taken over
EARLY_LOOK_FACTOR = 10.0


def step_rate(intervals: Iterable[float], points: Iterable[tuple[float, int]] = ()) -> float | None:
    """Steps per second: from the steps the newest points name (a poll may see several steps), else
    one step per progress interval (signals without a step number). None without any."""
    pts = list(points)
    for i in range(len(pts) - 1, 0, -1):  # only since the counter last went back (a new epoch's bar):
        if pts[i][1] < max(p[1] for p in pts[:i]) / 2:  # a drop by half, not a rank one step behind another
            pts = pts[i:]
            break
    top, env = None, []
    for at, step in pts:  # the running maximum: ranks beat in any order, the slowest one lags a step
        top = step if top is None else max(top, step)
        env.append((at, top))
    if len(env) >= 2 and env[-1][0] > env[0][0] and env[-1][1] > env[0][1]:
        return float(env[-1][1] - env[0][1]) / (env[-1][0] - env[0][0])
    recent = list(intervals)[-RATE_WINDOW:]
    total = sum(recent)
    return len(recent) / total if recent and total > 0 else None


def _median(xs: Iterable[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2]


class StallDetector:
    """Decides when a job is suspect; pure, driven by progress signals and the caller's clock."""

    def __init__(self, config: DetectorConfig, started_at: float) -> None:
        self.cfg = config
        self.started_at = started_at
        self.state = State.STARTING
        self.last: Progress | None = None
        self.strength = Strength.OUTPUT
        # Intervals between signals, per kind: each kind keeps its own cadence, so a hand-over from
        # heartbeats to the log's counter and back (a silent evaluation) keeps the job's history.
        self.history: dict[Strength, deque[float]] = {}
        self._seen: dict[Strength, float] = {}  # the newest signal of each kind, counted or not
        self.points: deque[tuple[float, int]] = deque(maxlen=RATE_POINTS)  # (at, step): the step rate
        self.phase_deadline: float | None = None  # a declared phase with a timeout
        self.phase_name: str | None = None
        self.extended_until: float | None = None
        self.extended_total = 0.0
        self.slow_since: float | None = None  # the first extension of this stall: --max-slow counts from it
        self.weaker: dict[Strength, Progress] = {}  # the newest signal of each weaker kind, not counted
        # Whether the log's counter moved on alone since the last counted signal (a hand-over needs it), and the
        # step it showed when that signal came (the step a bar drawn just after the beat shows again, or the next).
        self._counter_moved = False
        self._counter_base: int | None = None
        self.handovers: list[tuple[Strength, Strength, float]] = []  # (from, to, at), for the caller to log
        self.phase_started: float | None = None
        self.longest = 0.0  # the longest progress interval seen, over the whole attempt (bench/history.py)
        self.phase_longest: dict[str, float] = {}  # phase name -> its longest completed run, seconds

    @property
    def intervals(self) -> deque[float]:
        """Recent intervals between signals of the kind that counts now (plain output lines say
        nothing about step times once a counter or heartbeat is seen)."""
        return self.history.setdefault(self.strength, deque(maxlen=self.cfg.history))

    # --- inputs -------------------------------------------------------------------------------
    def progress(self, p: Progress) -> bool:
        """Record a progress signal. True if it counts (and resets the stall clock). The same lines again, word for
        word but their clock (`INFO waiting for /data/ready` each second), say no more than silence would: not
        progress, so a look decides, as it does for a silent job."""
        if p.strength == Strength.OUTPUT and p.repeat:
            return False
        prev = self._seen.get(p.strength)
        if prev is not None and p.at > prev:
            # The job's own intervals, whatever the poll's rate: a poll that saw n steps since the last one adds
            # n intervals (a round every 0.5 s over 0.05-s steps still has a history): n - 1 of the job's usual
            # interval (the median so far, at most the mean), and the rest of the gap first, so that a burst of
            # steps after a long evaluation keeps that long interval. The longest is always the whole gap.
            history = self.history.setdefault(p.strength, deque(maxlen=self.cfg.history))
            gap, n = p.at - prev, max(1, p.count)
            usual = _median(history) if len(history) >= self.cfg.min_history else None
            each = gap / n if usual is None else min(usual, gap / n)
            history.append(gap - (n - 1) * each)
            history.extend([each] * (n - 1))
            if p.strength >= self.strength:
                self.longest = max(self.longest, p.at - prev)
        self._seen[p.strength] = max(p.at, prev or p.at)
        if p.strength < self.strength:
            self.weaker[p.strength] = p
            if p.strength == Strength.COUNTER and self.last is not None and p.at > self.last.at:
                base = self._counter_base
                redrawn = base is not None and p.step in (base, base + 1) and p.at - self.last.at <= REDRAW_S
                self._counter_moved = self._counter_moved or not redrawn
            return False
        if p.strength == Strength.OUTPUT and self.state == State.HUNG and not p.fresh:
            # the same lines again do not say a declared hang ended (a pool's workers that die in their initializer
            # print the same traceback, hundreds a second, while map() waits for ever): new ones do
            return False
        if p.strength > self.strength:
            self.points.clear()
        if p.step is not None:
            self.points.append((p.at, p.step))
        self.strength = Strength(max(self.strength, p.strength))
        self.last = p
        counter = self.weaker.get(Strength.COUNTER)
        self._counter_moved, self._counter_base = False, counter.step if counter is not None else None
        # Plain output (a launcher's warnings, import chatter) does not end the startup phase: only
        # a counter or a heartbeat says the training loop runs.
        if p.strength > Strength.OUTPUT or self.state != State.STARTING:
            self.state = State.PROGRESSING
        self.extended_until = None
        self.extended_total = 0.0
        self.slow_since = None
        return True

    def set_phase(
        self, name: str | None, deadline: float | None, started: float | None = None, now: float | None = None
    ) -> None:
        """The phase a heartbeat declared (None: none), with its deadline and start; a phase that
        ends is remembered by its duration (the bound of the next phase of that name)."""
        ended = self.phase_name is not None and (
            name != self.phase_name
            or (started is not None and self.phase_started is not None and started > self.phase_started)
        )
        if ended and self.phase_name is not None and self.phase_started is not None and now is not None:
            took = max(0.0, now - self.phase_started)  # seen ended at this poll: at most this long
            self.phase_longest[self.phase_name] = max(self.phase_longest.get(self.phase_name, 0.0), took)
        self.phase_name, self.phase_deadline = name, deadline
        self.phase_started = started if name is not None else None

    # --- the clock ------------------------------------------------------------------------------
    def high_interval(self) -> float | None:
        """The 99th-percentile progress interval (the longest, with too few to say); None without any."""
        if not self.intervals:
            return None
        xs = sorted(self.intervals)
        if len(xs) < self.cfg.min_history:
            return xs[-1]
        return xs[min(len(xs) - 1, int(len(xs) * self.cfg.percentile / 100.0))]

    def threshold(self) -> float:
        """Seconds without progress after which the job is suspect (steady state)."""
        high = self.high_interval()
        return self.cfg.min_stall if high is None else max(self.cfg.min_stall, self.cfg.multiple * high)

    def look_after(self) -> float | None:
        """Seconds without progress after which a stalled job gets its first look, where only a proof of a
        hang decides: max(15 s, 10 x the 99th-percentile interval). None when that is no sooner than the
        stall threshold, or before the first progress (startup probes look then)."""
        if self.last is None or self.state != State.PROGRESSING:
            return None
        high = self.high_interval() or 0.0
        after = max(EARLY_LOOK_S, EARLY_LOOK_FACTOR * high)
        return after if after < self.threshold() else None

    def step_rate(self) -> float | None:
        """Steps per second of the signal that counts now (``step_rate``)."""
        return step_rate(self.intervals, self.points)

    def median_interval(self) -> float | None:
        """The median of recent progress intervals, once there are enough of them to say."""
        if len(self.intervals) < self.cfg.min_history:
            return None
        return _median(self.intervals)

    def phase_bound(self) -> HistoryBound | None:
        """A phase seen before is hung after phase_factor x its longest earlier run without progress
        (counted from the phase's start or its newest progress: a validation that beats is alive)."""
        longest = self.phase_longest.get(self.phase_name or "")
        if self.phase_name is None or self.phase_started is None or longest is None:
            return None
        limit = max(self.cfg.history_floor, self.cfg.phase_factor * longest, self.threshold())
        since = max(self.phase_started, self.last.at if self.last is not None else self.phase_started)
        return HistoryBound(
            since + limit,
            f"max({self.cfg.history_floor:.0f} s, {self.cfg.phase_factor:g} x the longest earlier "
            f"'{self.phase_name}' phase of {longest:.1f} s)",
        )

    def history_bound(self, workers: int = 0) -> HistoryBound | None:
        """When the job, alive or not, is hung by its own history: in a phase, ``phase_factor`` x the
        longest earlier phase of its name; else ``history_factor`` x the median progress interval
        (x ``workers`` when a DataLoader worker's batch is what is late: each worker makes every
        n-th batch), never before ``history_floor`` nor the stall threshold. None: too little history."""
        phase = self.phase_bound()
        if phase is not None or self.phase_name is not None:
            return phase
        med = self.median_interval()
        if med is None or self.last is None or self.strength == Strength.OUTPUT:
            return None  # plain output lines say nothing about step times
        limit = self._limit(med * max(1, workers))
        scale = f" x {workers} workers" if workers > 1 else ""
        return HistoryBound(
            self.last.at + limit,
            f"max({self.cfg.history_floor:.0f} s, {self.cfg.history_factor:g} x the median progress "
            f"interval of {med:.2f} s{scale}, {self.cfg.multiple:g} x the longest of "
            f"{self.longest:.1f} s)",
        )

    def _limit(self, median: float) -> float:
        """Seconds without progress an alive job gets: never below the floor, the stall threshold, or
        ``multiple`` x the longest interval this job ever had (an evaluation every 1000 steps that fell
        out of the recent window still counts)."""
        return max(
            self.cfg.history_floor, self.cfg.history_factor * median, self.threshold(), self.cfg.multiple * self.longest
        )

    def history_summary(self) -> dict[str, float | int | None]:
        """What the history bound stands on, for summary.json: intervals seen, their median and the
        longest, and the seconds without progress after which an alive job is hung (None: too little)."""
        med = self.median_interval()
        limit = self._limit(med) if med is not None and self.strength > Strength.OUTPUT else None
        return {
            "intervals": len(self.intervals),
            "median_s": None if med is None else round(med, 3),
            "longest_s": round(self.longest, 3),
            "bound_s": None if limit is None else round(limit, 1),
        }

    def deadline(self) -> float:
        """The unix time at which the job becomes suspect if nothing happens before."""
        if self.phase_name is not None:
            base = self.last.at if self.last else self.started_at
            d = self.phase_deadline if self.phase_deadline is not None else base + self.threshold()
            bound = self.phase_bound()
            if bound is not None:
                d = min(d, bound.at)
        elif self.state == State.STARTING or self.last is None:
            d = self.started_at + self.cfg.startup_grace
            if self.last is not None:  # output only so far: also allow a normal stall after the last line
                d = max(d, self.last.at + self.threshold())
        else:
            d = self.last.at + self.threshold()
        if self.extended_until is not None:
            d = max(d, self.extended_until)
        return d

    def check(self, now: float) -> bool:
        """True when the job has just become suspect (the caller then captures and diagnoses)."""
        if self.state in (State.SUSPECT, State.HUNG):
            return False
        if now < self.deadline():
            return False
        if self._hand_over(now):
            return False
        self.state = State.SUSPECT
        return True

    def _hand_over(self, now: float) -> bool:
        """Heartbeats stopped but the log's counter advanced after the last one: the heartbeats
        came from somewhere that is not the training loop (a DataLoader used once at startup, say),
        so the counter becomes the signal. Never the other way down to plain output."""
        counter = self.weaker.get(Strength.COUNTER)
        if self.strength != Strength.HEARTBEAT or counter is None or self.last is None or counter.at <= self.last.at:
            return False
        if not self._counter_moved:  # only the beat's own step drawn again by the log's bar
            return False
        self.handovers.append((self.strength, Strength.COUNTER, now))
        self.strength = Strength.COUNTER  # with the counter's own history of intervals
        self.points.clear()
        self.weaker.pop(Strength.COUNTER)
        self.last = counter
        self.extended_until = None
        self.extended_total = 0.0
        self.slow_since = None
        return True

    def stalled_for(self, now: float) -> float:
        """Seconds since the last progress (or the start)."""
        return now - (self.last.at if self.last else self.started_at)

    # --- outcomes of a capture -------------------------------------------------------------------
    def may_extend(self, now: float, bound: HistoryBound | None = None) -> bool:
        """Whether the job may be given more time at ``now``: not once the total extension would pass
        ``max_slow`` (counted from this stall's first extension), nor once the job's own history bound has
        passed (the caller then treats it as hung)."""
        limit = self.max_slow_at(now)  # wall time: captures take time too
        return now < limit and (bound is None or now < bound.at)

    def extend(self, now: float, bound: HistoryBound | None = None) -> bool:
        """The capture found the job alive and working: give it more time (False, and nothing changes, when
        ``may_extend`` says no). An extension never reaches past that bound."""
        if not self.may_extend(now, bound):
            return False
        more = self.threshold()
        if self.slow_since is None:
            self.slow_since = now
        limit = self.slow_since + self.cfg.max_slow
        self.extended_total += more
        until = min(now + more, limit)
        self.extended_until = until if bound is None else min(until, max(bound.at, now + 1.0))
        self.state = State.PROGRESSING if self.last is not None and self.strength > Strength.OUTPUT else State.STARTING
        return True

    def max_slow_at(self, now: float) -> float:
        """When --max-slow runs out for the current stall (counted from its first extension)."""
        return (self.slow_since if self.slow_since is not None else now) + self.cfg.max_slow

    def hold_until(self, until: float) -> None:
        """Waiting by design (peers at rendezvous, bounded by the caller's own timeout): not suspect
        again before ``until``. Not counted against --max-slow."""
        self.extended_until = until
        self.state = State.PROGRESSING if self.last is not None and self.strength > Strength.OUTPUT else State.STARTING

    def shift(self, gap: float) -> None:
        """The loop (and, with it, the job) was paused for ``gap`` seconds (a VM paused, a laptop asleep, the
        process group stopped): the stall clocks restart, so the paused time is not judged as a stall.
        Every time the detector keeps moves ``gap`` later; intervals are kept as they were."""

        def later(t: float | None) -> float | None:
            return None if t is None else t + gap

        self.started_at += gap
        if self.last is not None:
            self.last = dataclasses.replace(self.last, at=self.last.at + gap)
        self.weaker = {k: dataclasses.replace(p, at=p.at + gap) for k, p in self.weaker.items()}
        self._seen = {k: t + gap for k, t in self._seen.items()}
        self.extended_until, self.slow_since = later(self.extended_until), later(self.slow_since)
        self.phase_started, self.phase_deadline = later(self.phase_started), later(self.phase_deadline)
        if self.state == State.SUSPECT:
            self.state = (
                State.PROGRESSING if self.last is not None and self.strength > Strength.OUTPUT else State.STARTING
            )

    def suspect_now(self) -> None:
        """Another node asked for a capture: become suspect without waiting for the threshold."""
        if self.state not in (State.SUSPECT, State.HUNG):
            self.state = State.SUSPECT

    def declare_hung(self) -> None:
        """The capture found the job hung."""
        self.state = State.HUNG

    def reopen(self) -> None:
        """A hung job was healed in place and did not move, or the heal did not take: judge it again now."""
        if self.state == State.HUNG:
            self.state = State.SUSPECT
