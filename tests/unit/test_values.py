"""@frozen and @mutable behave as the dataclasses they stand for: same repr, ==, hash, frozenness."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from hangwatch.records.values import frozen, mutable


@frozen
class Point:
    x: int
    y: int = 0
    note: str = dataclasses.field(default="", compare=False)


@dataclasses.dataclass(frozen=True)
class PointDC:
    x: int
    y: int = 0
    note: str = dataclasses.field(default="", compare=False)


@frozen(kw_only=True)
class One:
    name: str


@mutable
class Box:
    items: list[int] = dataclasses.field(default_factory=list)
    hidden: int = dataclasses.field(default=0, repr=False)


@dataclasses.dataclass
class BoxDC:
    items: list[int] = dataclasses.field(default_factory=list)
    hidden: int = dataclasses.field(default=0, repr=False)


@frozen
class Nothing:
    pass


def test_a_frozen_value_reads_compares_and_hashes_as_its_dataclass():
    a, b, c = Point(1, 2, "a"), Point(1, 2, "b"), Point(2, 2)
    assert repr(a) == repr(PointDC(1, 2, "a")).replace("PointDC", "Point") == "Point(x=1, y=2, note='a')"
    assert a == b and hash(a) == hash(b) == hash(PointDC(1, 2, "z"))  # `note` is not compared, not hashed
    assert a != c and len({a, b, c}) == 2
    assert a != PointDC(1, 2, "a")  # another class: not equal, as a dataclass is not
    assert (
        One(name="n") == One(name="n")
        and hash(One(name="n")) == hash(("n",))
        and repr(One(name="n")) == "One(name='n')"
    )
    assert Nothing() == Nothing() and hash(Nothing()) == hash(()) and repr(Nothing()) == "Nothing()"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        One("n")  # type: ignore[misc]  # keyword only
    assert dataclasses.replace(a, y=9) == Point(1, 9) and copy.deepcopy(a) == a


def test_a_mutable_value_reads_and_compares_as_its_dataclass_and_is_not_hashable():
    a, b = Box([1]), Box([1])
    assert repr(a) == repr(BoxDC([1], hidden=3)).replace("BoxDC", "Box") == "Box(items=[1])"
    assert a == b and a != Box([2]) and a != Box([1], hidden=3) and a != BoxDC([1])
    a.items.append(2)
    a.hidden = 4
    assert a.items == [1, 2] and a != b
    with pytest.raises(TypeError):
        hash(a)


def test_a_value_that_holds_itself_reads_as_its_dataclass_does():
    box = Box([])
    box.items.append(box)  # type: ignore[arg-type]
    assert repr(box) == "Box(items=[...])"
