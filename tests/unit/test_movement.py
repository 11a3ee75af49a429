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


def test_without_being_alone_no_spin_is_proven():
    from hangwatch.diagnose.loops import loop_motion
    from hangwatch.evidence import LocalsRead

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
