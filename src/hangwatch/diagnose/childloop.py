"""A loop that waits for a child: ``while p.is_alive(): time.sleep(0.2)`` ends when the child does and does nothing
else meanwhile, so its thread waits on that child as a ``join()`` would (read by the state module, followed by the
graph)."""

from __future__ import annotations

import ast

from hangwatch.diagnose import proof
from hangwatch.diagnose.loops import is_sleep, parse_loop
from hangwatch.diagnose.views import ProcessView
from hangwatch.records.evidence import LocalsRead

CHILD_ALIVE = frozenset({"is_alive"})  # p.is_alive(): a multiprocessing child's liveness
CHILD_STATUS = frozenset({"poll", "exitcode", "returncode"})  # p.poll() is None, p.exitcode is None: not yet ended


def sleeps_until_child_ends(body: str | None) -> bool:
    """``loop`` is a ``while`` whose test is a child's liveness (``p.is_alive()``, ``p.poll() is None``, ``p.exitcode
    is None``, ``p.returncode is None``) and whose body only sleeps (or passes): it ends when that child does, and does
    nothing else meanwhile (``body``: the loop's source, header and body)."""
    loop = parse_loop(body) if body else None
    if not isinstance(loop, ast.While) or loop.orelse:
        return False
    test = loop.test
    alive = isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in CHILD_ALIVE
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is):
        left, right = test.left, test.comparators[0]
        left = left.func if isinstance(left, ast.Call) and not left.args else left
        alive = (
            isinstance(left, ast.Attribute)
            and left.attr in CHILD_STATUS
            and isinstance(right, ast.Constant)
            and right.value is None
        )
    return alive and all(
        isinstance(x, ast.Pass)
        or (isinstance(x, ast.Expr) and isinstance(x.value, ast.Call) and is_sleep(x.value.func))
        for x in loop.body
    )


def child_loop(v: ProcessView) -> LocalsRead | None:
    """The read of ``v``'s main thread in a loop that only sleeps until its child ends, where every other thread of
    ``v`` is parked (nothing else of it could end the wait): it waits on that child. None elsewhere."""
    t = v.main_thread
    if t is None or not t.frames or not proof.sealed_but(v, t.tid):
        return None
    return next((r for r in reversed(v.locals_of(t.tid)) if sleeps_until_child_ends(r.body)), None)
