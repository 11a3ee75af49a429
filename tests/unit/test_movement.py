"""A process is stuck only if it did not move. Each case here is the healthy twin of a stuck one in
test_inspect_scenarios.py: the same line in every stack sample, but the job moves (it wakes, reads
bytes, or its loop variables advance), so it must not be called hung.

Here the tests that start no process; those that do are in tests/e2e/test_movement.py.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


# --- native frames -------------------------------------------------------------------------------------


# --- a loop that moves and goes nowhere ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "values", "frozen"),
    [
        (
            "while len(batch) < self.target:\n    batch += idx[i:i + 1]\n    i += 1",
            {"batch": "[0, 1]", "self": "<Multipack at 0x7f>", "i": "90", "idx": "[0, 1]"},
            True,
        ),
        ("while len(batch) < target:\n    batch += idx[i:i + 1]", {"batch": "[0, 1]", "target": "32"}, True),
        # the body calls something: it could reach what the condition reads
        ("while len(batch) < target:\n    batch += fetch(i)", {"batch": "[0, 1]", "target": "32"}, False),
        # a way out of the body
        ("while len(batch) < target:\n    if i > 9:\n        break\n    i += 1", {"batch": "[]", "target": "3"}, False),
        # a value not read whole (cut short): it may be growing unseen
        ("while len(batch) < target:\n    batch += [i]", {"batch": "[0, 1, 2, ...]", "target": "9"}, False),
        # an object the body touches, shown only by its address
        ("while q.size < target:\n    q.size += 0", {"q": "<Q at 0x7f>", "target": "9"}, False),
        # a global (not among the locals), or a call in the condition
        ("while len(batch) < LIMIT:\n    i += 1", {"batch": "[]"}, False),
        ("while ready(batch):\n    i += 1", {"batch": "[]"}, False),
        ("while True:\n    i += 1", {"i": "1"}, False),
    ],
)
def test_frozen_condition(source, values, frozen):
    from hangwatch.diagnose.loops import frozen_condition

    assert (frozen_condition(source, values) is not None) is frozen


@pytest.mark.parametrize(
    ("source", "values", "world"),
    [
        # a clock, a file, a method of an object: the condition may turn with no local changing
        ("while time.monotonic() < until:\n    n += 1", {"until": "5.0", "n": "1"}, True),
        ("while not os.path.exists(p):\n    n += 1", {"p": "'/x'", "n": "1"}, True),
        ("while not self.q.empty():\n    n += 1", {"self": "<Trainer at 0x7f>", "n": "1"}, True),
        # a shared Value, a manager's proxy, shared memory: another process writes them
        ("while flag.value == 0:\n    n += 1", {"flag": "<Synchronized at 0x7f>", "n": "1"}, True),
        ("while len(results) < n:\n    pass", {"results": "<ListProxy at 0x7f>", "n": "3"}, True),
        ("while not shm.buf[0]:\n    pass", {"shm": "<SharedMemory at 0x7f>"}, True),
        ("while self.flag.value == 0:\n    pass", {"self": "<T at 0x7f>"}, True),
        # a value cut short: its method may see what was not read
        ("while ring.count(0) < 1:\n    pass", {"ring": "[1, 1, ...]"}, True),
        # what the locals show: a dict's get, a list's count, the loop's own object, a pure builtin
        ('while not state.get("ready"):\n    n += 1', {"state": "{}", "n": "1"}, False),
        ("while ring.count(0) < 1:\n    pass", {"ring": "[1, 1, 1]"}, False),
        ("while not self.done:\n    n += 1", {"self": "<Trainer at 0x7f>", "n": "1"}, False),
        ("while len(batch) < target:\n    i += 1", {"batch": "[0, 1]", "target": "32"}, False),
    ],
)
def test_a_condition_that_reads_the_world_is_told_from_one_that_reads_its_locals(source, values, world):
    from hangwatch.diagnose.loops import frozen_condition, reads_the_world

    assert reads_the_world(source, values) is world
    if world:  # and no such loop is ever "a loop that cannot end"
        assert frozen_condition(source, values) is None


@pytest.mark.parametrize(
    ("source", "name", "counts"),
    [
        ("while n >= 0:\n    n += 1", "n", True),  # moves away from its end: never ends
        ("while 0 <= n:\n    n = n + 1", "n", True),
        ("while n < 0:\n    n -= 1", "n", True),
        ("while not done:\n    n += 1", "n", True),  # the counter is not what ends it
        ("for i in count():\n    pass", "i", True),
        ("while i < n:\n    i += 1", "i", False),  # gets there: the loop ends
        ("while n > 0:\n    n -= 1", "n", False),
        ("while n != 5:\n    n += 1", "n", False),
        ("for i in range(10**9):\n    pass", "i", False),  # a range ends at its stop
    ],
)
def test_a_counter_only_counts_when_its_loop_cannot_end_by_it(source, name, counts):
    from hangwatch.diagnose.loops import counts_only

    assert counts_only(source, name) is counts


def test_without_being_alone_no_spin_is_proven():
    from hangwatch.diagnose.loops import loop_motion
    from hangwatch.records.evidence import LocalsRead

    def read(at, spins):
        return LocalsRead(
            at=at,
            tid=1,
            function="f",
            file="/x.py",
            line=3,
            values=(("state", '{"done": False}'), ("spins", str(spins))),
            loop='while not state["done"]',
            body='while not state["done"]:\n    spins += 1',
        )

    reads = (read(0.0, 10), read(0.5, 90000))
    assert loop_motion(reads, alone=True).counting
    shared = loop_motion(reads, alone=False)
    assert not shared.counting and not shared.advanced and "another thread" in shared.evidence


# --- a closed loop whose numbers go round ----------------------------------------------------------------------
FOG = "while density != 3:\n    density = (density * 2) % 6"


def _read(body: str, line: int, at: float = 0.0, **values: str):
    from hangwatch.records.evidence import LocalsRead

    return LocalsRead(
        at=at,
        tid=1,
        function="f",
        file="/x.py",
        line=line,
        values=(("x", "tensor([5., 5.])"), *values.items()),
        loop=body.splitlines()[0].rstrip(":"),
        body=body,
        loop_line=10,
    )


@pytest.mark.parametrize(
    ("body", "line", "values", "cycles"),
    [
        (FOG, 10, {"density": "2"}, True),  # at the header: 2 -> 4 -> 2, and 3 never comes
        (FOG, 11, {"density": "4"}, True),  # at a one-statement body's line: the top of an iteration
        (FOG, 10, {"density": "3"}, False),  # the condition is false: it ends
        (FOG, 10, {"density": "0"}, True),  # 0 -> 0
        # Collatz from 27: 111 steps, then n == 1: it ends (work, however long)
        ("while n != 1:\n    n = n // 2 if n % 2 == 0 else 3 * n + 1", 10, {"n": "27"}, False),
        # a countdown ends; a count up with no bound grows past what is judged: no proof either way
        ("while n != 0:\n    n -= 1", 10, {"n": "90000"}, False),
        ("while n != -1:\n    n += 1", 10, {"n": "0"}, False),
        # mid-iteration of a two-statement body: the numbers are not the top of an iteration
        ("while a != 3:\n    a = (a * 2) % 6\n    b = a", 12, {"a": "2", "b": "2"}, False),
        ("while a != 3:\n    a = (a * 2) % 6\n    b = a", 10, {"a": "2", "b": "4"}, True),
        # not closed: a call, an attribute, a global, a float, a value cut short, a way out
        ("while d != 3:\n    d = step(d)", 10, {"d": "2"}, False),
        ("while d != 3:\n    d = (d * 2) % self.m", 10, {"d": "2", "self": "<M at 0x7f>"}, False),
        ("while d != 3:\n    d = (d * 2) % M", 10, {"d": "2"}, False),
        ("while d != 3:\n    d = (d * 2) % 6", 10, {"d": "2.0"}, False),
        ("while d != 3:\n    d = (d * 2) % 6", 10, {"d": "2..."}, False),
        # a way out the numbers reach ends it; one they never reach is no way out (run exactly, not guessed)
        ("while d != 3:\n    if d > 3:\n        break\n    d = (d * 2) % 6", 10, {"d": "2"}, False),
        ("while d != 3:\n    if d > 9:\n        break\n    d = (d * 2) % 6", 10, {"d": "2"}, True),
    ],
)
def test_a_closed_loop_whose_state_comes_back_never_ends(body, line, values, cycles):
    from hangwatch.diagnose.cycle import closed_cycle
    from hangwatch.diagnose.loops import parse_loop

    assert (closed_cycle(_read(body, line, **values), parse_loop(body)) is not None) is cycles


def test_a_closed_cycle_is_a_proof_where_two_reads_saw_its_names_move():
    """Two reads 0.5 s apart saw `density` 2 then 4: the names move, which alone reads as a loop that advances;
    run on the numbers, it is a cycle (the zoo's dl_worker_infinite_augment, 120 s with the defaults before)."""
    from hangwatch.diagnose.loops import loop_motion

    motion = loop_motion((_read(FOG, 11, density="2"), _read(FOG, 11, 0.5, density="4")), alone=True)
    assert motion is not None and not motion.advanced and motion.counting and motion.frozen
    assert motion.proof_fact.startswith("a loop that cannot end: `while density != 3:` is closed")
    healthy = "while n != 1:\n    n = n // 2 if n % 2 == 0 else 3 * n + 1"
    walks = loop_motion((_read(healthy, 10, n="27"), _read(healthy, 10, 0.5, n="82")), alone=True)
    assert walks is not None and walks.advanced


@pytest.mark.parametrize(
    ("states", "ticks", "spinning"),
    [
        ("RRRR", (0, 60, 120, 180), True),  # 60 % of a core: busy
        ("RRRR", (0, 5, 10, 15), True),  # 15 %, runnable throughout: a spin starved by a crowded machine
        ("RSRS", (0, 5, 10, 15), False),  # 15 %, asleep in between: it waits for something
        ("RRRR", (0, 1, 1, 2), False),  # 2 %: idle, whatever the kernel's letter
    ],
)
def test_a_spin_on_a_crowded_machine_is_still_a_spin(states, ticks, spinning):
    from hangwatch.diagnose.views import ThreadView
    from hangwatch.records.evidence import Frame, ThreadSample

    frame = Frame(function="wait_for_flag", file="/job/train.py", line=17)
    samples = tuple(
        ThreadSample(1, "MainThread", st, None, n, True, True, (frame,)) for st, n in zip(states, ticks, strict=True)
    )
    assert ThreadView(1, samples, duration_s=1.0, clock_ticks=100).spinning is spinning


@pytest.mark.parametrize(
    ("header", "ends"),
    [
        ("while time.time() - start < 15", True),
        ("while time.monotonic() < deadline:", True),
        ("while deadline > time.perf_counter():", True),
        ("while not done and time.time() < end:", True),
        ("while start - time.time() > -15:", True),
        ("while monotonic() < until:", True),  # from time import monotonic
        ("while time.time() > start:", False),  # grows away from its bound: never ends by the clock
        ("while time.time() < end or not done:", False),  # `or`: the other part may keep it going
        ("while self.clock.time() < end:", False),  # not the time module's clock
        ("while 2 * time.time() < end:", True),  # a product by a positive number grows with the clock too
        ("while time.time() * x < end:", False),  # (by what is not a number as written: not followed)
        ("while not done:", False),
        ("while time.time() < time.time() + 5:", False),  # the clock on both sides: left - right stays put
        ("while time.monotonic() - start < limit + time.monotonic():", False),
        (None, False),
    ],
)
def test_a_loop_whose_condition_reads_the_clock_towards_its_bound_ends_by_itself(header, ends):
    """A deadline loop (`while time.monotonic() - start < 15: ...`) is a wait that ends as time passes: a spin on it
    is `spin_waits`, never a hang (tests/e2e: deadline_spin.py)."""
    from hangwatch.diagnose.deadline import ends_by_clock

    assert ends_by_clock(header) is ends


def test_a_deadline_loop_whose_bound_is_infinite_or_unread_is_no_deadline():
    """`timeout = float("inf")` never comes: the loop is judged as any spin."""
    from hangwatch.diagnose.deadline import ends_by_clock

    header = "while time.monotonic() - start < timeout"
    assert ends_by_clock(header, {"start": "12.5", "timeout": "15"})
    assert ends_by_clock(header, {"start": "12.5", "timeout": "1.5e3"})
    assert not ends_by_clock(header, {"start": "12.5", "timeout": "inf"})
    assert not ends_by_clock(header, {"start": "12.5", "timeout": "-inf"})
    assert ends_by_clock("while time.time() - start < float(arg)", {"start": "12.5", "arg": "'12'"})
    assert not ends_by_clock("while time.time() - start < float(arg)", {"start": "12.5", "arg": "'inf'"})


@pytest.mark.parametrize(
    ("body", "way"),
    [
        (
            "while p.poll() is None:\n    if time.monotonic() > end:\n        p.kill()\n        break\n    time.sleep(1)",
            "if time.monotonic() > end",
        ),
        (
            "for _ in range(9):\n    if time.time() - t0 >= 30 and ok:\n        raise TimeoutError\n    sleep(1)",
            "if time.time() - t0 >= 30 and ok",
        ),
        ("while time.monotonic() < end:\n    time.sleep(1)", "while time.monotonic() < end"),
        ("while p.poll() is None:\n    time.sleep(1)", None),  # (the child's end alone)
        ("while True:\n    if time.time() < t0 + 30:\n        break\n    sleep(1)", None),  # (false as time passes)
        ("while True:\n    if time.time() > t0 + 30:\n        log()\n    sleep(1)", None),  # (stays in the loop)
        (
            "while True:\n    left = end - time.monotonic()\n    if left <= 0:\n        break\n    sleep(1)",
            "if left <= 0",
        ),
        (
            "while True:\n    if time.time() > t0 + 30:\n        log()\n    elif done:\n        break\n    sleep(1)",
            None,
        ),
        ("while True:\n    for i in x:\n        if time.time() > end:\n            break\n    sleep(1)", None),
        ("while True:\n    if time.time() > end:\n        def f():\n            return 1\n    sleep(1)", None),
    ],
)
def test_a_poll_with_a_deadline_leaves_its_loop_by_the_clock(body, way):
    """A poll whose loop an `if` on the clock leaves (`if time.monotonic() > end: p.kill(); break`) comes back by
    itself (``deadline.leaves_by_clock``, asked by ``acts.acts_by_itself``), a reading of the clock the body keeps
    in a name too (`left = end - time.monotonic()`); one only the child's end leaves, an `if` that turns false as
    time passes, one that stays in the loop (its `elif` leaves; a `break` of a loop inside it, a function's `return`),
    does not."""
    from hangwatch.diagnose.deadline import leaves_by_clock

    assert leaves_by_clock(body, {}) == way


@pytest.mark.parametrize(
    ("body", "way"),
    [
        ("while p.poll() is None:\n    if now() > end:\n        break\n    sleep(0.5)", "if now() > end"),
        ("while True:\n    if t.monotonic() - t0 > 12:\n        break", "if t.monotonic() - t0 > 12"),
        ("while True:\n    if timeit.default_timer() > end:\n        return", "if timeit.default_timer() > end"),
        (
            "while True:\n    if datetime.now(timezone.utc) > end:\n        raise Late()",
            "if datetime.now(timezone.utc) > end",
        ),
        ("while True:\n    if p.poll(1) > end:\n        break", None),  # (a call with an argument: not a clock's)
        ("while True:\n    if default_timer(3) > end:\n        break", None),
        ("while True:\n    if self.clock.time() > end:\n        break", None),  # (an object's: maybe simulated)
        ("while True:\n    if datetime.datetime.now() > end:\n        break", "if datetime.datetime.now() > end"),
        ("while True:\n    if self.clock.now() > end:\n        break", None),
        ("while True:\n    if cls.now() > end:\n        break", None),
        ("while True:\n    if now(5) > end:\n        break", None),  # (a function of the user's: not an alias)
        ("while True:\n    if int(time.time()) > end:\n        break", "if int(time.time()) > end"),
        ("while True:\n    if (time.time() - t0) / 60 > 5:\n        break", "if (time.time() - t0) / 60 > 5"),
        ("while True:\n    if 60 / time.time() > 5:\n        break", None),  # (a quotient of it: not followed)
    ],
)
def test_a_clock_by_another_name_is_read_as_the_clock(body, way):
    """A poll's deadline read through a clock of another name (`from time import monotonic as now`, `import time as t`,
    `timeit.default_timer`, `datetime.now(tz)`) leaves its loop by the clock as `time.monotonic()`'s does: the job
    whose loop it is comes back by itself. They were read as no clock, and a child's proof killed the healthy job."""
    from hangwatch.diagnose.deadline import leaves_by_clock

    assert leaves_by_clock(body, {}) == way


@pytest.mark.parametrize(
    ("body", "values", "left"),
    [
        (
            "for _ in range(turns):\n    if p.poll() is not None:\n        return\n    time.sleep(0.5)",
            {"turns": "60", "_": "11"},
            (49, 0.5),
        ),
        ("for i in range(10, 60, 5):\n    sleep(delay)\n    sleep(1)", {"i": "20", "delay": "2"}, (8, 3.0)),
        ("for i in range(5, 0, -1):\n    time.sleep(1)", {"i": "2"}, (2, 1.0)),
        ("for _ in range(int(seconds * 2)):\n    pass", {"seconds": "8.0"}, (16, 0.0)),
        ("for _ in range(turns):\n    time.sleep(1)", {}, (None, 1.0)),  # (its bound not read: it ends, not known when)
        ("for _ in range(self.retries):\n    time.sleep(1)", {"self": "<Job>"}, (None, 1.0)),
        ("for _ in range(len(items)):\n    time.sleep(1)", {"items": "[1, 2]"}, (None, 1.0)),
        ("for _ in range(turns):\n    time.sleep(1)", {"turns": "inf"}, None),
        ("for _ in range(3, 9, 0):\n    pass", {}, None),
        ("for x in items:\n    time.sleep(1)", {}, None),
        (
            "while p.poll() is None:\n    if tries >= n:\n        break\n    tries += 1\n    sleep(0.5)",
            {"tries": "3", "n": "16"},
            (14, 0.5),  # (the current turn too: "at most")
        ),
        ("while tries < 10:\n    tries += 1\n    sleep(1)", {"tries": "4"}, (7, 1.0)),
        ("while left > 0:\n    left = left - 2\n    sleep(1)", {"left": "9"}, (6, 1.0)),
        ("while True:\n    if 5 <= n:\n        return\n    n += 1", {"n": "1"}, (5, 0.0)),
        ("while p.poll() is None and tries < n:\n    tries += 1", {"tries": "3", "n": "16"}, (14, 0.0)),
        ("while True:\n    tries += 1\n    if tries > n or done:\n        break", {"tries": "3", "n": "16"}, (15, 0.0)),
        ("while True:\n    tries += 1\n    if tries == n:\n        break", {"tries": "3", "n": "16"}, (14, 0.0)),
        (
            "while True:\n    tries += 2\n    if tries == n:\n        break",
            {"tries": "3", "n": "16"},
            None,
        ),  # (may skip)
        ("while True:\n    tries += 1\n    if tries >= n and done:\n        break", {"tries": "3", "n": "9"}, None),
        (
            "while True:\n    if ok:\n        sleep(9)\n    tries += 1\n    if tries >= 5:\n        break",
            {"tries": "0"},
            (6, 0.0),
        ),
        # (a step a `continue` may skip, one in a branch, a bound the loop moves, a counter set in a nested loop or with
        # another name: none counts the turns)
        (
            "while True:\n    if p.poll() is None:\n        continue\n    tries += 1\n    if tries >= 3:\n        break",
            {"tries": "0"},
            None,
        ),
        ("while tries < n:\n    if ok():\n        tries += 1", {"tries": "0", "n": "10"}, None),
        ("while tries < n:\n    n += 1\n    tries += 1", {"tries": "0", "n": "10"}, None),
        ("while tries < 9:\n    tries += 1\n    for x in y:\n        tries = 0", {"tries": "0"}, None),
        ("while tries < 9:\n    tries += 1\n    tries, last = 0, now", {"tries": "0"}, None),
        ("for _ in range(a * b):\n    pass", {"a": "1e200", "b": "1e200"}, None),  # (past every float: not read)
        ("while tries < n * n:\n    tries += 1", {"tries": "0", "n": "1e200"}, None),
        ("while left > 0:\n    left += 2", {"left": "9"}, None),  # (it steps away from its bound)
        ("while True:\n    if n >= 5:\n        return\n    n += 1\n    n = 0", {"n": "1"}, None),  # (set again)
        ("while p.poll() is None:\n    if tries >= n:\n        break\n    tries += 1", {"n": "16"}, (None, 0.0)),
        # (a count in attributes, which no read of locals shows: it may end, when is not known; but one that steps
        # away from its bound, or is never compared with one, does not)
        (
            "while p.poll() is None:\n    self.tries += 1\n    if self.tries >= self.max_tries:\n        break\n    sleep(0.5)",
            {"self": "<Runner>"},
            (None, 0.5),
        ),
        ("while self.n < self.limit:\n    self.n += 1\n    sleep(1)", {}, (None, 1.0)),
        ("while True:\n    self.n -= 1\n    if self.n > self.limit:\n        break", {}, None),
        ("while p.poll() is None:\n    self.waited += 0.5\n    sleep(0.5)", {}, None),
        (  # (a count not read may come at any turn, whatever the count read says: 9,999 turns at most)
            "while tries < 10000:\n    tries += 1\n    self.n += 1\n    if self.n >= self.limit:\n        break",
            {"tries": "2"},
            (None, 0.0),
        ),
        (  # (an `if` under another may not be reached in every turn: the loop's own way counts)
            "while tries < 100:\n    tries += 1\n    if fatal:\n        if tries >= 3:\n            break",
            {"tries": "2"},
            (99, 0.0),
        ),
        ("while True:\n    if self.n >= 5:\n        return\n    self.n += 1\n    self.n = 0", {}, None),  # (set again)
        # (`tries = 1 + tries` steps as `tries += 1` does; a header over two lines is read whole)
        (
            "while p.poll() is None:\n    tries = 1 + tries\n    if tries > 24:\n        break",
            {"tries": "10"},
            (16, 0.0),
        ),
        (
            "while (p.poll() is None\n       and waited < 12.0):\n    waited += 0.5\n    time.sleep(0.5)",
            {"waited": "5.0"},
            (15, 0.5),
        ),
        ("while True:\n    time.sleep(1)", {}, None),
    ],
)
def test_a_loop_over_a_range_says_how_many_turns_it_has_left(body, values, left):
    """A poll that gives up after a count of turns (`for _ in range(turns): ...; time.sleep(0.5)`, then kill), or of
    retries (`tries += 1`; `if tries >= n: break`, `while tries < n`), ends by itself: how many turns it has left,
    past its counter, and what its own body sleeps in one, as written (``deadline.turns_left``); a bound or a counter
    not read, a counter that steps away from its bound or is set again, or any other loop, is not counted."""
    from hangwatch.diagnose.deadline import turns_left

    got = turns_left(body, values)
    assert (got[1:] if got else None) == left


@pytest.mark.parametrize(
    ("function", "words", "values"),
    [
        ("wait_for_alarm", "read 2 times and hold nothing", ((), ())),
        ("<module>", "top level", ((), ())),
        ("relax", "read 2 times and `w` changed: what changed was not read", ((("w", "0.5"),), (("w", "0.25"),))),
    ],
)
def test_a_spin_whose_function_has_no_locals_is_not_said_to_be_at_a_modules_top_level(function, words, values):
    """A spin in a function with no locals of its own (`while not state["done"]: pass` on a global) read its locals
    twice, empty: it was said to be "code at a module's top level", which it is not. One whose float local changed
    (nothing counts up) was said to have "too few reads" of locals read twice: what was read is said."""
    import os
    import time

    from hangwatch.diagnose.code import busy_loop_rule
    from hangwatch.diagnose.scene import Scene
    from hangwatch.records.evidence import (
        Evidence,
        Frame,
        LocalsRead,
        ProcessEvidence,
        ProcessInfo,
        ProcessSample,
        Role,
        ThreadSample,
    )

    pid, t0 = os.getpid(), time.time()
    frame = Frame(function=function, file="/job/train.py", line=7, code='while not state["done"]:')
    info = ProcessInfo(
        pid,
        1,
        pid,
        pid,
        "python",
        ("python", "train.py"),
        None,
        True,
        Role.MAIN,
        None,
        None,
        None,
        t0,
        None,
        None,
        False,
    )
    samples = tuple(
        ProcessSample(
            t0 + 0.5 * i,
            "R",
            0.5 * i,
            None,
            None,
            None,
            0,
            0,
            1,
            (ThreadSample(pid, "MainThread", "R", None, 50 * i, True, True, (frame,)),),
            None,
        )
        for i in range(3)
    )
    reads = tuple(LocalsRead(t0 + 0.5 * i, pid, function, "/job/train.py", 7, values[i - 1]) for i in (1, 2))
    ev = Evidence(pid, pid, t0, t0 + 1.0, 100, 2, (ProcessEvidence(info, samples, locals=reads),))
    (hit,) = busy_loop_rule(Scene.of(ev))
    assert any(words in e for e in hit.finding.evidence), hit.finding.evidence


@pytest.mark.parametrize(
    ("body", "line", "wait"),
    [
        ("while not lock.acquire(timeout=1):\n    pass", 1, "lock.acquire(timeout=1)"),
        ("while not ready.wait(1):\n    time.sleep(0.1)", 1, "ready.wait(1)"),
        ("while t.is_alive():\n    t.join(0.5)", 2, "t.join(0.5)"),
        ("while True:\n    if ev.wait(1):\n        break", 2, "ev.wait(1)"),
        (
            "while True:\n    try:\n        item = q.get(timeout=1)\n        break\n    except queue.Empty:\n        continue",
            3,
            "q.get(timeout=1)",
        ),
        (
            "while True:\n    try:\n        item = q.get(timeout=1)\n    except queue.Empty:\n        continue\n    break",
            3,
            "q.get(timeout=1)",
        ),
        (
            "while True:\n    try:\n        item = q.get(timeout=1)\n    except Empty:\n        pass\n    else:\n        break",
            3,
            "q.get(timeout=1)",
        ),
        (
            "while True:\n    try:\n        return f.result(timeout=1)\n    except TimeoutError:\n        continue",
            3,
            "f.result(timeout=1)",
        ),
        # (another way out: a log line, a stop flag, a count, a deadline, a handler that falls through to a break; a
        # consumer that never leaves waits for work; a `finally` runs on a timeout too)
        ("while not lock.acquire(timeout=1):\n    log.warning('waiting')", 1, None),
        ("while t.is_alive():\n    t.join(0.5)\n    print('waiting')", 2, None),
        ("while True:\n    if ev.wait(1):\n        break\n    if stop:\n        return", 2, None),
        (
            "while not stop.is_set():\n    try:\n        item = q.get(timeout=1)\n    except Empty:\n        continue\n    break",
            3,
            None,
        ),
        (
            "while True:\n    try:\n        item = q.get(timeout=1)\n    except Empty:\n        continue\n    handle(item)",
            3,
            None,
        ),
        (
            "while True:\n    n += 1\n    try:\n        return f.result(timeout=1)\n    except TimeoutError:\n        continue",
            4,
            None,
        ),
        (
            "while True:\n    try:\n        x = q.get(timeout=1)\n    except Empty:\n        if time.time() > end:\n"
            "            raise\n        continue\n    break",
            3,
            None,
        ),
        ("while True:\n    try:\n        x = q.get(timeout=1)\n    except Empty:\n        pass\n    break", 3, None),
        ("while True:\n    try:\n        x = q.get(timeout=1)\n        break\n    finally:\n        n += 1", 3, None),
        ("while True:\n    time.sleep(1)", 2, None),
        # (a wait whose arguments call, which may raise at a deadline; one on an object made anew each turn; one that
        # does not block)
        (
            "while True:\n    try:\n        x = q.get(timeout=end - time.monotonic())\n    except Empty:\n"
            "        continue\n    break",
            3,
            None,
        ),
        ("while not next(slots).acquire(timeout=0.1):\n    pass", 1, None),
        ("while not lock.acquire(False):\n    time.sleep(0.1)", 1, None),
        (
            "while True:\n    try:\n        x = q.get(block=False)\n    except Empty:\n        continue\n    break",
            3,
            None,
        ),
    ],
)
def test_a_timed_wait_is_retried_for_ever_only_where_the_loop_has_no_other_way_out(body, line, wait):
    """A wait with a timeout that its loop retries until it succeeds, with no other way out (no flag, deadline or count
    read, nothing called but the wait and sleep until it succeeds: ``deadline.retried_wait``), waits as if it had no
    timeout: its wake-ups are not work."""
    from hangwatch.diagnose.deadline import retried_wait

    assert retried_wait(body, line) == wait
