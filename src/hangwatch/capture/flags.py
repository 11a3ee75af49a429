"""What the flag a loop waits on is, read from the loop's own file: ``while not stop.is_set(): time.sleep(1)``
sleeps between reads of ``stop``, so the kernel never sees the futex that would say whose it is. The file does,
where every binding of that name in it is a ``threading.Event()``: memory of the process alone, which no other
process (a child, a launcher, another host) nor a file can set."""

from __future__ import annotations

import ast
import functools

THREADING_EVENT = "threading.Event"
EVENT_TESTS = frozenset({"is_set", "wait"})  # `while not X.is_set():`, `while not X.wait(1.0):`
MAX_SOURCE = 1_000_000  # characters: a larger file is not parsed (the flag stays unknown)


def tested_flag(header: str) -> str | None:
    """``stop`` from ``while not stop.is_set()`` (``self._stop`` from ``while not self._stop.wait(1)``), as written;
    None for any other header."""
    head = header.strip()
    try:
        loop = ast.parse(f"{head}{'' if head.endswith(':') else ':'}\n    pass").body[0]
    except (SyntaxError, IndexError):
        return None
    test = loop.test if isinstance(loop, ast.While) else None
    if (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and isinstance(test.operand, ast.Call)
        and isinstance(test.operand.func, ast.Attribute)
        and test.operand.func.attr in EVENT_TESTS
    ):
        return ast.unparse(test.operand.func.value)
    return None


def flag_kind(source: str, header: str) -> str | None:
    """``threading.Event`` where ``header`` tests a flag (``tested_flag``) that the file ``source`` binds only to
    ``threading.Event()`` (or ``Event()`` imported from threading), at least once; None where the file binds it to
    anything else, or in any other way (a parameter, an import, a loop or ``with`` target, unpacking: whatever it
    is then was not written here), or not at all."""
    flag = tested_flag(header)
    if flag is None or len(source) > MAX_SOURCE:
        return None
    return _kind(source, flag)


@functools.lru_cache(maxsize=64)
def _kind(source: str, flag: str) -> str | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    makers = _event_makers(tree)
    events = 0
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign | ast.AnnAssign):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for target in targets:
                if ast.unparse(target) == flag:
                    if n.value is None or not _makes_event(n.value, makers):
                        return None
                    events += 1
                elif any(ast.unparse(x) == flag for x in ast.walk(target)):
                    return None  # bound inside an unpacking: not read here
        elif _binds_otherwise(n, flag):
            return None
    return THREADING_EVENT if events else None


def _binds_otherwise(n: ast.AST, flag: str) -> bool:
    """Node ``n`` binds ``flag`` other than by a plain assignment: what it holds then is not written here."""
    if isinstance(n, ast.AugAssign | ast.NamedExpr):
        return ast.unparse(n.target) == flag
    if isinstance(n, ast.For | ast.AsyncFor | ast.comprehension | ast.withitem):
        target = n.optional_vars if isinstance(n, ast.withitem) else n.target
        return target is not None and any(ast.unparse(x) == flag for x in ast.walk(target))
    if "." in flag:
        return False
    if isinstance(n, ast.arg):
        return n.arg == flag
    if isinstance(n, ast.alias):
        return (n.asname or n.name).split(".")[0] == flag
    if isinstance(n, ast.ExceptHandler | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return n.name == flag
    return False


def _event_makers(tree: ast.Module) -> frozenset[str]:
    """The names a call of which makes a threading event in this file: ``threading.Event`` under the name its
    import gives ``threading``, and ``Event`` where it was imported from threading."""
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            names |= {f"{a.asname or a.name}.Event" for a in n.names if a.name == "threading"}
        elif isinstance(n, ast.ImportFrom) and n.module == "threading" and not n.level:
            names |= {a.asname or a.name for a in n.names if a.name == "Event"}
    return frozenset(names)


def _makes_event(value: ast.expr, makers: frozenset[str]) -> bool:
    return isinstance(value, ast.Call) and not value.args and not value.keywords and ast.unparse(value.func) in makers
