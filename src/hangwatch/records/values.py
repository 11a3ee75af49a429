"""``@frozen`` and ``@mutable``: dataclasses whose ``repr``, ``==`` and ``hash`` are shared functions.

On Python 3.10-3.12 ``dataclasses`` compiles each method it writes with an ``exec`` of its own: six for a frozen
class, three for another. ``hangwatch run`` defines some 70 dataclasses before it starts the job, and their
``__repr__``, ``__eq__`` and ``__hash__`` were about a tenth of its start (bench/overhead.py --start-only). Here
``dataclass`` still writes ``__init__`` (and a frozen class's ``__setattr__``/``__delattr__``); the others behave as
the ones it would write: the fields whose ``repr``/``compare``/``hash`` is set, in order; ``==`` only between
instances of one class; a mutable class unhashable; a method the class writes itself kept.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> Callable[[Any], Any]:  # noqa: D103  (for the type checker only)
        return lambda f: f


T = TypeVar("T")


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The named attributes of an instance, as a tuple (attrgetter of one name gives the bare value)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    if not names:
        return lambda obj: ()
    return attrgetter(*names)


class _Shared:
    """The methods every such class shares, reading the field names ``_share`` keeps on the class."""

    __values_repr__: tuple[str, ...]
    __values_compare__: Callable[[Any], tuple[Any, ...]]
    __values_hash__: Callable[[Any], tuple[Any, ...]]

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in type(self).__values_repr__)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        compared = type(self).__values_compare__
        return bool(compared(self) == compared(other))

    def __hash__(self) -> int:
        return hash(type(self).__values_hash__(self))


def _share(cls: type[T], made: Any, hashable: bool) -> type[T]:
    fields = dataclasses.fields(made)
    made.__values_repr__ = tuple(f.name for f in fields if f.repr)
    made.__values_compare__ = _getter([f.name for f in fields if f.compare])
    made.__values_hash__ = _getter([f.name for f in fields if (f.compare if f.hash is None else f.hash)])
    own = cls.__dict__
    # As dataclass: what the class writes itself stays, but the None its own __eq__ leaves as __hash__.
    implicit_hash = own.get("__hash__", 0) is None and "__eq__" in own
    for name in ("__repr__", "__eq__"):
        if name not in own:
            setattr(made, name, getattr(_Shared, name))
    if "__hash__" not in own or implicit_hash:
        made.__hash__ = _Shared.__hash__ if hashable else None
    return made  # type: ignore[no-any-return]


@overload
def frozen(cls: type[T], /) -> type[T]: ...
@overload
def frozen(*, kw_only: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: type[T] | None = None, /, *, kw_only: bool = False) -> Any:
    """``@dataclass(frozen=True)`` (``kw_only=True`` too, if asked)."""

    def build(cls: type[T]) -> type[T]:
        return _share(cls, dataclasses.dataclass(frozen=True, repr=False, eq=False, kw_only=kw_only)(cls), True)

    return build if cls is None else build(cls)


@dataclass_transform(field_specifiers=(dataclasses.field,))
def mutable(cls: type[T], /) -> type[T]:
    """``@dataclass``."""
    return _share(cls, dataclasses.dataclass(repr=False, eq=False)(cls), False)
