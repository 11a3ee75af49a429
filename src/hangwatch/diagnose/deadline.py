"""Loops whose way out is the clock: a ``while`` whose condition turns false as time passes (``ends_by_clock``: a wait
for a deadline), or one that an ``if`` on the clock leaves (``leaves_by_clock``: a poll with a deadline, then a kill).
Read from the loop's source as capture found it (``LocalsRead.loop``, ``.body``)."""

from __future__ import annotations

import ast
import math

from hangwatch.diagnose.loops import counter_name, is_sleep, parse_loop, step_of

CLOCKS = frozenset({"time", "monotonic", "perf_counter", "time_ns", "monotonic_ns", "perf_counter_ns"})
# A clock by another name: an alias of one (`from time import monotonic as now`, `timeit.default_timer`) or the wall
# clock's (`datetime.now()`); as an attribute, a name's (`import time as t`)
ALIASES = frozenset({"now", "utcnow", "default_timer"})


def _clock_sign(node: ast.expr, names: dict[str, int] | None = None) -> int:
    """How ``node`` moves as the clock advances: +1 (a clock read, by any of its names: ``CLOCKS``, ``ALIASES``, plus
    or minus what does not read it), -1 (subtracted from), 0 (it reads no clock, or reads it in a way not followed: a
    product, a call of it). ``names``: the locals the loop's body binds to a clock's reading (``remaining = deadline -
    time.monotonic()``), by their sign."""
    if isinstance(node, ast.Name):
        return (names or {}).get(node.id, 0)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float", "round"):
        return _clock_sign(node.args[0], names) if len(node.args) == 1 else 0  # (`int(time.time())`)
    if isinstance(node, ast.Call):
        fn = node.func
        # (`from time import monotonic`, `now()`; a name's, `t.monotonic()` (a module's, or an object's bound to a
        # name), never `self`'s nor an attribute's, `self.clock.now()`, which may be a simulated clock; but
        # `datetime.datetime.now()`, and `datetime.now(tz)`, which alone takes an argument)
        owner = fn.value if isinstance(fn, ast.Attribute) else None
        owner = owner.value if isinstance(owner, ast.Attribute) and owner.attr == "datetime" else owner
        named = isinstance(owner, ast.Name) and owner.id not in ("self", "cls")
        name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) and named else ""
        return 1 if name in CLOCKS | ALIASES and (not node.args or (name in ("now", "utcnow") and named)) else 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mult):
        for this, other in ((node.left, node.right), (node.right, node.left)):  # (`(time.time() - t0) / 60`)
            by = other.value if isinstance(other, ast.Constant) else None
            if (
                isinstance(by, int | float)
                and not isinstance(by, bool)
                and by > 0
                and (this is node.left or isinstance(node.op, ast.Mult))
            ):
                return _clock_sign(this, names)
        return 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        left, right = _clock_sign(node.left, names), _clock_sign(node.right, names)
        right = -right if isinstance(node.op, ast.Sub) else right
        return left + right if {left, right} != {1, -1} else 0
    return 0


def _ends_as_time_passes(test: ast.expr) -> bool:
    if isinstance(test, ast.BoolOp):  # `and` ends when any part does; `or` when all do
        parts = [_ends_as_time_passes(v) for v in test.values]
        return any(parts) if isinstance(test.op, ast.And) else all(parts)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    grows = _clock_sign(test.left) - _clock_sign(test.comparators[0])  # how left - right moves with the clock
    if isinstance(test.ops[0], ast.Lt | ast.LtE):
        return grows > 0
    if isinstance(test.ops[0], ast.Gt | ast.GtE):
        return grows < 0
    return False


def ends_by_clock(header: str | None, values: dict[str, str] | None = None) -> bool:
    """Whether a ``while`` loop's condition turns false by itself as the clock advances: it compares a read of the
    ``time`` module's clock (``time.time()``, ``time.monotonic()``, ``perf_counter()``) against a bound it grows
    towards (``while time.monotonic() - start < 15``, ``while deadline > time.time()``): a wait for a deadline. Not
    where a local it reads is infinite (``timeout = float("inf")``: it never comes)."""
    loop = parse_loop(header.rstrip().removesuffix(":") + ":" if header else "")
    if not isinstance(loop, ast.While) or not _ends_as_time_passes(loop.test):
        return False
    read = {n.id for n in ast.walk(loop.test) if isinstance(n, ast.Name)} & set(values or {})
    return not any((values or {})[n].strip("'\"").lstrip("+-").lower() in ("inf", "infinity", "nan") for n in read)


def _begins_as_time_passes(test: ast.expr, names: dict[str, int]) -> bool:
    if isinstance(test, ast.BoolOp):  # (any part: the others are the user's switches, `if deadline and ...`)
        return any(_begins_as_time_passes(v, names) for v in test.values)
    ops = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ops)):
        return False
    grows = _clock_sign(test.left, names) - _clock_sign(test.comparators[0], names)
    return grows > 0 if isinstance(test.ops[0], ast.Gt | ast.GtE) else grows < 0


NESTED = (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _own(stmts: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of a loop's body that are its own: not those of a loop, a function or a class inside it (whose
    ``break`` or ``return`` leaves only that)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [n for n in stmts if not isinstance(n, NESTED)]
    while todo:
        n = todo.pop()
        out.append(n)
        todo += [c for c in ast.iter_child_nodes(n) if not isinstance(c, NESTED)]
    return out


def leaves_by_clock(body: str | None, values: dict[str, str]) -> str | None:
    """The way out of a loop that the clock alone brings, as written, or None: its condition (``ends_by_clock``), or
    an ``if`` in its body that turns true as time passes and leaves the loop (``if time.monotonic() > end: p.kill();
    break``): a poll with a deadline."""
    loop = parse_loop(body or "")
    if not isinstance(loop, ast.While | ast.For) or not body:
        return None
    if isinstance(loop, ast.While) and ends_by_clock(body.split("\n", 1)[0], values):
        return body.split("\n", 1)[0].rstrip(":")
    names: dict[str, int] = {}
    for n in _own(loop.body):  # (the clock's readings the body binds to a name)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            names[n.targets[0].id] = _clock_sign(n.value) or names.get(n.targets[0].id, 0)
    for n in _own(loop.body):
        leaves = isinstance(n, ast.If) and any(isinstance(x, ast.Break | ast.Return | ast.Raise) for x in _own(n.body))
        if leaves and isinstance(n, ast.If) and _begins_as_time_passes(n.test, names):
            return f"if {ast.get_source_segment(body, n.test) or '...'}"
    return None


def _number(node: ast.expr, values: dict[str, str]) -> float | None:
    """The value of a count as written: a number, a local read as one, and sums, products, quotients and ``int()``,
    ``round()`` of them; None where anything in it is not (a call, an attribute, a local not read)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -n if (n := _number(node.operand, values)) is not None else None
    if isinstance(node, ast.Name):
        try:
            n = float(values[node.id])
        except (KeyError, ValueError):
            return None
        return n if math.isfinite(n) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "round", "float"):
        return _number(node.args[0], values) if len(node.args) == 1 and not node.keywords else None
    ops = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__, ast.Div: float.__truediv__}
    ops[ast.FloorDiv] = float.__floordiv__
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        left, right = _number(node.left, values), _number(node.right, values)
        if left is None or right is None or (right == 0 and isinstance(node.op, ast.Div | ast.FloorDiv)):
            return None
        n = ops[type(node.op)](left, right)
        return n if math.isfinite(n) else None
    return None


# A way out after a count of turns whose count or bound was not read (an attribute's: ``self.tries``, a call's)
UNREAD = -1
NUMBER_CALLS = frozenset({"int", "round", "float"})


def _unread(node: ast.expr, values: dict[str, str]) -> bool:
    """``node`` reads what no read of locals shows: an attribute (``self.retries``), an item, a call's result
    (``len(items)``), a name not read. (Else every name in it was read, and what ``_number`` makes of them is what
    it is: a number, or none, ``inf``.)"""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in NUMBER_CALLS):
            return True
        if isinstance(n, ast.Attribute | ast.Subscript) or (
            isinstance(n, ast.Name) and n.id not in values and n.id not in NUMBER_CALLS
        ):
            return True
    return False


def _range_turns(loop: ast.For, values: dict[str, str]) -> int | None:
    """A ``for`` over a ``range``: its turns left, past its counter where that was read, where its bounds are read;
    else ``UNREAD``."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return None
    bounds = [_number(a, values) for a in it.args]
    if not 1 <= len(bounds) <= 3 or it.keywords:
        return None
    if any(b is None and not _unread(a, values) for a, b in zip(it.args, bounds, strict=True)):
        return None  # (read, but no finite number)
    if any(b is None for b in bounds):
        return UNREAD  # (`range(self.retries)`, `range(len(items))`: it ends, after turns not read)
    start, stop, step = (0, int(bounds[0] or 0), 1) if len(bounds) == 1 else (*(int(b or 0) for b in bounds), 1)[:3]
    if step == 0:
        return None
    at = _number(loop.target, values) if isinstance(loop.target, ast.Name) else None
    done = max(0, int((at - start) // step)) if at is not None else 0  # (the counter's turn: past its first)
    return max(0, -((start - stop) // step) - done)


FLIP = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}
NEGATE = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}


def _step_by(stmt: ast.stmt) -> tuple[str, float] | None:
    """``tries += 1``, ``left = left - 2``, ``self.tries += 1``: the name (``loops.counter_name``) and its signed step;
    None for any other statement."""
    target: ast.expr | None = stmt.target if isinstance(stmt, ast.AugAssign) else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    name = counter_name(target) if target is not None else None
    if name is None or (step := step_of(stmt, name)) is None:
        return None
    by = step[1].value
    if not isinstance(step[0], ast.Add | ast.Sub) or isinstance(by, bool) or not isinstance(by, int | float) or not by:
        return None
    return name, float(by) if isinstance(step[0], ast.Add) else -float(by)


def _steps(loop: ast.While | ast.For) -> tuple[dict[str, float], set[str]]:
    """The locals the loop steps once in every turn: a statement of its own body, before any that may ``continue``,
    by one constant (``tries += 1``, ``left = left - 2``): name -> its step; and every name the loop binds. A counter
    bound anywhere else in the loop too (``tries = 0``, ``tries, last = 0, now``, a nested loop's) is none."""
    steps: dict[str, float | None] = {}
    for stmt in loop.body:
        if any(isinstance(x, ast.Continue) for x in _own([stmt])):
            break  # (a step after a `continue` may be skipped in any turn: its count is not the turns')
        if (step := _step_by(stmt)) is not None:
            steps[step[0]] = None if step[0] in steps else step[1]
    bound = [
        name
        for n in ast.walk(loop)
        if isinstance(n, ast.Name | ast.Attribute) and isinstance(n.ctx, ast.Store) and (name := counter_name(n))
    ]
    return {n: by for n, by in steps.items() if by is not None and bound.count(n) == 1}, set(bound)


def _count_turns(
    test: ast.expr, ends_when: bool, counters: tuple[dict[str, float], set[str]], values: dict[str, str]
) -> int | None:
    """How many turns, the current one too, until ``test`` turns ``ends_when`` as a counter steps (a ``while``'s test
    turns false, an ``if`` that leaves turns true): one comparison of the counter with a bound the loop does not bind,
    or an ``and``/``or`` of such, where any part (or every part) must turn; ``UNREAD`` where the counter steps towards
    its bound but either was not read; None where it never gets there."""
    if isinstance(test, ast.BoolOp):
        parts = [_count_turns(v, ends_when, counters, values) for v in test.values]
        read = [p for p in parts if p is not None and p != UNREAD]
        if isinstance(test.op, ast.And) != ends_when:  # (a while's `and`, an if's `or`: any part ends it)
            return min(read) if read else UNREAD if UNREAD in parts else None
        return None if None in parts else UNREAD if UNREAD in parts else max(read)
    steps, bound_here = counters
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in FLIP):
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    if counter_name(right) in steps and counter_name(left) not in steps:
        left, right, op = right, left, FLIP[op]  # (`bound <= tries`: `tries >= bound`)
    name = counter_name(left)
    if name is None or name not in steps:
        return None
    if any(counter_name(n) in bound_here for n in ast.walk(right) if isinstance(n, ast.Name | ast.Attribute)):
        return None  # (a bound the loop moves too)
    bound, now, step = _number(right, values), _number(left, values), steps[name]
    op = op if ends_when else NEGATE[op]  # (a while's `tries < n` ends when `tries >= n`)
    if op is ast.NotEq or (op is ast.Eq and abs(step) != 1):
        return None  # (reached only stepping by one through whole numbers)
    if op is not ast.Eq and (step > 0) != (op in (ast.Gt, ast.GtE)):
        return None  # (stepping away from its bound)
    if (bound is None and not _unread(right, values)) or (now is None and not _unread(left, values)):
        return None  # (read, but no finite number: `n = inf`, it never gets there)
    if now is None or bound is None:
        return UNREAD  # (`self.tries`, `range(self.retries)`: not in the frame's locals)
    if (bound - now) * step < 0:
        return None  # (past its bound, stepping away from it)
    if op is ast.Eq:
        return int(abs(bound - now)) + 1 if now.is_integer() and bound.is_integer() else None
    return math.ceil(abs(bound - now) / abs(step)) + 1 + (op in (ast.Gt, ast.Lt))


def turns_left(body: str | None, values: dict[str, str]) -> tuple[str, int | None, float] | None:
    """A loop that ends by itself after a count of turns: a ``for`` over a ``range``, or one a counter leaves (its
    ``while`` test, or an ``if`` in its body that leaves it, compares a name the body only steps with a bound:
    ``tries += 1``, ``if tries >= retries: break``): that header or test, as written, how many turns it has left at
    most, and the seconds its own body sleeps in a turn as written (``time.sleep(0.5)``); None for any other loop.
    Such a loop ends by itself once each of its turns does. Its turns are None where a way out counts what was not
    read (``self.tries``, ``range(self.retries)``, a local whose read failed): that one may come at any turn, whatever
    another way's count says. An ``if`` nested in another counts only where none of the loop's own ways does (it may
    not be reached in every turn)."""
    loop = parse_loop(body or "")
    if not isinstance(loop, ast.For | ast.While) or not body:
        return None
    steps = _steps(loop)
    if isinstance(loop, ast.For):
        top = [(f"for {_text(body, loop.target)} in {_text(body, loop.iter)}", _range_turns(loop, values))]
    else:
        top = [(f"while {_text(body, loop.test)}", _count_turns(loop.test, False, steps, values))]
    nested: list[tuple[str, int | None]] = []
    for node in _own(loop.body):
        if isinstance(node, ast.If) and any(isinstance(x, ast.Break | ast.Return | ast.Raise) for x in _own(node.body)):
            leaves = (f"if {_text(body, node.test)}", _count_turns(node.test, True, steps, values))
            (top if node in loop.body else nested).append(leaves)
    unread = [(UNREAD, w) for w, n in (*top, *nested) if n == UNREAD]
    read = sorted((n, w) for w, n in top if n is not None and n != UNREAD)
    later = [(n, w) for w, n in nested if n is not None and n != UNREAD]
    if not (unread or read or later):
        return None
    turns, way = (unread or read or later)[0]
    # (what every turn sleeps: its body's own sleeps, not a branch's)
    calls = [x.value for x in loop.body if isinstance(x, ast.Expr) and isinstance(x.value, ast.Call)]
    slept = sum(n for x in calls if is_sleep(x.func) and x.args and (n := _number(x.args[0], values)) is not None)
    return way, None if turns == UNREAD else turns, slept


def _text(source: str, node: ast.expr) -> str:
    """``node`` as written in ``source``; one written over lines (brackets carry a header on), as Python reads it."""
    text = ast.get_source_segment(source, node) or "..."
    return ast.unparse(node) if "\n" in text else text


# Waits a loop may retry until they succeed: a queue's get or a future's result (each raises on its timeout), a lock's
# or a semaphore's acquire, an event's or a condition's wait (each returns False on it), a thread's or a process's join
# (its loop asks whether it is still alive)
RAISE_ON_TIMEOUT = frozenset({"get", "result"})
FALSE_ON_TIMEOUT = frozenset({"acquire", "wait"})


def _idle(stmts: list[ast.stmt], ends: bool = True) -> bool:
    """``stmts`` do nothing but pass, sleep (``time.sleep(1)``, no call in its arguments) or go on to the next turn
    (``continue``, where ``ends``, as the last): nothing in them leaves the loop, or reaches what its wait is on."""
    for i, s in enumerate(stmts):
        call = s.value if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) else None
        given = (*call.args, *(k.value for k in call.keywords)) if call is not None else ()
        if (
            call is not None
            and is_sleep(call.func)
            and not any(isinstance(n, ast.Call) for a in given for n in ast.walk(a))
        ):
            continue
        if not (isinstance(s, ast.Pass) or (isinstance(s, ast.Continue) and ends and i == len(stmts) - 1)):
            return False
    return True


def _leaves(stmts: list[ast.stmt]) -> bool:
    """``stmts`` may leave the loop they are in: a ``break``, a ``return`` or a ``raise`` of their own."""
    return any(isinstance(n, ast.Break | ast.Return | ast.Raise) for n in _own(stmts))


def retried_wait(body: str | None, line: int) -> str | None:
    """The timed wait at ``line`` of a loop (1: its header), as written, where the loop's only way out is that wait
    succeeding: it is retried for ever, as if it had no timeout (``while not lock.acquire(timeout=1): pass``; ``while
    t.is_alive(): t.join(0.5)``; ``while True:`` then ``try: item = q.get(timeout=1)`` with every ``except`` going on
    to the next turn, or ``if ev.wait(1): break``, the way out after it). None for any other loop: one with another
    way out (a stop flag, a deadline, a count), or that calls anything but its wait and sleep before it succeeds; nor
    a wait on an object made anew each turn, or whose arguments call anything, or that does not block."""
    loop = parse_loop(body or "")
    if not isinstance(loop, ast.While) or loop.orelse or not body:
        return None
    names = RAISE_ON_TIMEOUT | FALSE_ON_TIMEOUT | {"join"}
    wait = next(
        (
            n
            for n in ast.walk(loop)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in names
            if n.lineno == line
        ),
        None,
    )
    if wait is None or not isinstance(wait.func, ast.Attribute) or counter_name(wait.func.value) is None:
        return None  # (the same object each turn: a name's, `self.lock`'s; not `next(slots).acquire(...)`)
    given = [*wait.args, *(k.value for k in wait.keywords)]
    if any(isinstance(n, ast.Call | ast.NamedExpr | ast.Await) for a in given for n in ast.walk(a)):
        return None  # (`q.get(timeout=deadline - time.monotonic())`: a call may raise, at a deadline, and leave)
    blocking = (
        wait.args[0] if wait.args else next((k.value for k in wait.keywords if k.arg in ("block", "blocking")), None)
    )
    if isinstance(blocking, ast.Constant) and not blocking.value:
        return None  # (`lock.acquire(False)`, `q.get(block=False)`: no wait at all)
    said, on, test = ast.get_source_segment(body, wait), ast.unparse(wait.func.value), loop.test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and test.operand is wait:
        return said if wait.func.attr in FALSE_ON_TIMEOUT and _idle(loop.body) else None
    asks = test.func if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) else None
    if asks is not None and asks.attr == "is_alive" and ast.unparse(asks.value) == on:  # (`while t.is_alive()`)
        joins = [s for s in loop.body if not (isinstance(s, ast.Expr) and s.value is wait)]
        return said if wait.func.attr == "join" and _idle(joins) and len(joins) < len(loop.body) else None
    if not (isinstance(test, ast.Constant) and test.value):
        return None
    at = next((i for i, s in enumerate(loop.body) if any(n is wait for n in ast.walk(s))), None)
    if at is None or not _idle(loop.body[:at], ends=False):
        return None
    s, rest = loop.body[at], loop.body[at + 1 :]
    if isinstance(s, ast.Try) and s.body and any(n is wait for n in ast.walk(s.body[0])) and not s.finalbody:
        # (a handler that falls through reaches what follows the try after a timeout too)
        on_to_next = all(h.body and isinstance(h.body[-1], ast.Continue) for h in s.handlers)
        first = s.body[0]  # (the wait's own statement: `item = q.get(...)`, `return fut.result(...)`)
        simple = isinstance(first, ast.Assign | ast.AnnAssign | ast.Expr | ast.Return)
        if wait.func.attr not in RAISE_ON_TIMEOUT or not simple or not all(_idle(h.body) for h in s.handlers):
            return None
        then = s.body if isinstance(first, ast.Return) else s.body[1:]  # (what runs once it succeeded)
        after = [*then, *s.orelse, *(rest if on_to_next else ())]
        return said if _leaves(after) and (on_to_next or _idle(rest)) else None
    if (
        isinstance(s, ast.If) and s.test is wait and wait.func.attr in FALSE_ON_TIMEOUT
    ):  # (`if lock.acquire(timeout=1):`)
        return said if _leaves(s.body) and _idle(s.orelse) and _idle(rest) else None
    return None
