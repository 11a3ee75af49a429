"""A closed loop whose numbers go round: run its body on the integer locals read at the top of an iteration;
a state that comes back before the condition turns false is a cycle the loop never leaves (loops.py asks, where
two reads saw the loop's names move)."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

from hangwatch.records.evidence import LocalsRead

# A closed loop: its condition and body read and write only integer locals, with arithmetic, comparisons and
# `if`s, and call nothing. From one read of its locals at the top of an iteration, the loop's whole future is
# the body run on those numbers: run here, on the numbers, a state that comes back (before the condition turns
# false) is a cycle the loop never leaves.
CYCLE_STEPS = 20_000  # iterations run on the numbers, at most (~0.1 s for a loop that neither ends nor cycles)
CYCLE_BITS = 256  # a number that grows past this is no cycle we can prove
INT_REPR = re.compile(r"-?[0-9]{1,40}")
_BINOPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.RShift: operator.rshift,
}
_CMPOPS: dict[type, Callable[[int, int], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


class _Open(Exception):
    """The loop is not closed (a call, an attribute, a float, ...), or a number left what is judged."""


def _eval(node: ast.expr, env: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):  # bool is an int
        return int(node.value)
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise _Open(node.id)
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _eval(node.left, env), _eval(node.right, env)
        if isinstance(node.op, ast.FloorDiv | ast.Mod) and b == 0:
            raise _Open("division by zero")  # it raises: the loop ends
        out = _BINOPS[type(node.op)](a, b)
        if out.bit_length() > CYCLE_BITS:
            raise _Open("grows")
        return out
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return int(not v)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        return ~v  # ast.Invert
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, env) for v in node.values)  # short-circuits as Python does
        return int(all(values)) if isinstance(node.op, ast.And) else int(any(values))
    if isinstance(node, ast.Compare) and all(type(op) in _CMPOPS for op in node.ops):
        left = _eval(node.left, env)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, env)
            if not _CMPOPS[type(op)](left, right):
                return 0
            left = right
        return 1
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, env) else node.orelse, env)
    raise _Open(type(node).__name__)


def _run(body: list[ast.stmt], env: dict[str, int]) -> None:
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            env[stmt.targets[0].id] = _eval(stmt.value, env)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            env[stmt.target.id] = _eval(ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op, stmt.value), env)
        elif isinstance(stmt, ast.If):
            _run(stmt.body if _eval(stmt.test, env) else stmt.orelse, env)
        elif isinstance(stmt, ast.Pass):
            pass
        else:
            raise _Open(type(stmt).__name__)  # break, continue, return, a call, a loop, ...


def closed_cycle(read: LocalsRead, loop: ast.stmt | None) -> str | None:
    """Why the ``while`` loop ``read`` caught (``loop``: its source, parsed) can never end, in words, or None:
    the loop is closed (above), the read caught it at the top of an iteration (its header's line, or the line of
    a one-statement body), every name it uses is a local read whole as an integer, and running its body on those
    numbers brings a state back before the condition turns false: the loop repeats that cycle for ever."""
    if read.body is None or read.loop_line is None:
        return None
    if not isinstance(loop, ast.While) or loop.orelse or not loop.body:
        return None
    first = loop.body[0]
    one = len(loop.body) == 1 and isinstance(first, ast.Assign | ast.AugAssign)
    if read.line != read.loop_line and not (one and read.line == read.loop_line + first.lineno - 1):
        # Mid-iteration: some of the body already ran on these numbers. The header's line is the top of an
        # iteration; so is a one-statement body's line, before its store or after it (the next iteration's top).
        return None
    names = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name)}
    values = dict(read.values)
    env: dict[str, int] = {}
    for name in names:
        text = values.get(name)
        if text in ("True", "False"):
            env[name] = int(text == "True")
        elif text is not None and INT_REPR.fullmatch(text):
            env[name] = int(text)
        else:
            return None  # a global, an object, a float, a number cut short: not judged
    start = dict(env)
    order = sorted(env)
    seen: dict[tuple[int, ...], int] = {}
    try:
        for step in range(CYCLE_STEPS):
            state = tuple(env[n] for n in order)
            if state in seen:
                period = step - seen[state]
                header = ast.get_source_segment(read.body.strip(), loop.test) or "?"
                shown = ", ".join(f"`{n}` = {start[n]}" for n in order)
                return (
                    f"`while {header}:` is closed (its body calls nothing and uses only integer locals), and run "
                    f"on the numbers read ({shown}) it comes back to the same state every {period} "
                    f"iteration{'s' if period != 1 else ''} without the condition turning false: it never ends"
                )
            seen[state] = step
            if not _eval(loop.test, env):
                return None  # it ends: work, however long
            _run(loop.body, env)
    except _Open:
        return None
    return None
