"""What the flag a loop waits on is, read from the loop's own file: ``while not stop.is_set(): time.sleep(1)``
sleeps between reads of ``stop``, so the kernel never sees the futex that would say whose it is. The file does,
where every binding of that name in it is a ``threading.Event()``: memory of the process alone, which no other
process (a child, a launcher, another host) nor a file can set."""

from __future__ import annotations

import ast
import functools

from hangwatch.records.evidence import MP_VALUE, THREADING_EVENT

EVENT_TESTS = frozenset({"is_set", "wait"})  # `while not X.is_set():`, `while not X.wait(1.0):`
VALUE_MAKERS = frozenset({"Value", "RawValue"})  # multiprocessing's: a number in memory its children map too
MP_MODULES = frozenset({"multiprocessing", "multiprocessing.sharedctypes"})
MAX_SOURCE = 1_000_000  # characters: a larger file is not parsed (the flag stays unknown)


def tested_flag(header: str) -> str | None:
    """``stop`` from ``while not stop.is_set()`` (``self._stop`` from ``while not self._stop.wait(1)``), as written;
    None for any other header."""
    head = header.strip()
    try:
        loop = ast.parse(f"{head}{'' if head.endswith(':') else ':'}\n    pass").body[0]
    except (SyntaxError, IndexError):
        return None
    return (event_tested(loop.test) or value_tested(loop.test)) if isinstance(loop, ast.While) else None


def value_tested(test: ast.expr) -> str | None:
    """The ``.value`` alone a loop's test reads against constants, as written (``flag.value`` from ``flag.value ==
    0``, ``not flag.value``, ``flag.value < 3``); None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        sides = [test.left, *test.comparators]
        if sum(isinstance(x, ast.Constant) for x in sides) != 1:
            return None
        test = next(x for x in sides if not isinstance(x, ast.Constant))
    return ast.unparse(test) if isinstance(test, ast.Attribute) and test.attr == "value" else None


def event_tested(test: ast.expr) -> str | None:
    """The event a loop's test waits to be set, as written (``stop`` from ``not stop.is_set()`` or
    ``not stop.wait(1.0)``); None for any other test."""
    if (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and isinstance(test.operand, ast.Call)
        and isinstance(test.operand.func, ast.Attribute)
        and test.operand.func.attr in EVENT_TESTS
    ):
        return ast.unparse(test.operand.func.value)
    return None


def flag_kind(source: str, header: str, line: int | None = None) -> str | None:
    """``threading.Event`` where ``header`` (the loop's, at ``line``) tests a flag (``tested_flag``) that the file
    ``source`` binds only to ``threading.Event()`` (or ``Event()`` imported from threading), at least once
    (``multiprocessing.Value`` where it tests a flag's ``.value`` that the file binds only to multiprocessing's
    ``Value``/``RawValue``, under the name its import or ``get_context()`` gives it); None
    where the file binds it to anything else, or in any other way (a parameter, an import, a loop or ``with``
    target, unpacking: whatever it is then was not written here), or not at all. An attribute, ``self.X``, is read
    only in the class the loop is in, which must bind it itself and have no base but ``object`` or threading's
    ``Thread`` (a base from another file may bind it too); every ``<anything>.X = ...`` in the file must make an
    event as well (``hb._stop = mp.Event()`` sets another object's)."""
    flag = tested_flag(header)
    if flag is None or len(source) > MAX_SOURCE:
        return None
    return _kind(source, flag, line)


PLAIN_BASES = frozenset({"object", "threading.Thread", "Thread"})


@functools.lru_cache(maxsize=64)
def _kind(source: str, flag: str, line: int | None) -> str | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    nodes = list(ast.walk(tree))
    wants_value = flag.endswith(".value")  # (a test of a Value's number, ``value_tested``)
    flag = flag.removesuffix(".value")
    owner, _, name = flag.rpartition(".")
    attr = name if owner else None  # ``self.X``: the attribute X; a plain name: None
    if attr is not None and (owner != "self" or line is None):
        return None
    if any(_rebinds_anything(n, attr) for n in nodes):
        return None
    makers = _value_makers(nodes) if wants_value else _event_makers(nodes)
    if wants_value and not _sleeps_are_times(nodes):
        return None  # (a `sleep` of the file's own may write the value: the loop's body is read as only sleeping)
    within = _class_at(tree, line) if attr is not None else tree
    scoped = _scope(tree, line, flag) if wants_value and attr is None else None
    if within is None or (wants_value and attr is None and scoped is None):
        return None
    nodes = scoped if scoped is not None else nodes
    for n in nodes:
        for target, value in _assigned(n):
            text = ast.unparse(target)
            same = text == flag or (attr is not None and (text == attr or getattr(target, "attr", None) == attr))
            if same:  # ``self.stop`` in any class, another object's ``.stop``, a class's own ``stop = ...``
                if value is None or not (_makes_value if wants_value else _makes_event)(value, makers):
                    return None
            elif any(ast.unparse(x) == flag for x in ast.walk(target)):
                return None  # bound inside an unpacking: not read here
        if _binds_otherwise(n, flag):
            return None
    events = sum(1 for n in (scoped or ast.walk(within)) for t, _ in _assigned(n) if ast.unparse(t) == flag)
    return (MP_VALUE if wants_value else THREADING_EVENT) if events else None


def _scope(tree: ast.Module, line: int | None, name: str) -> list[ast.AST] | None:
    """The nodes of the scope a loop at ``line`` reads the plain name ``name`` from (a parameter of another function
    binds another name): the innermost function holding the line where it binds ``name`` itself, else the module's
    top level; None where a ``global`` or ``nonlocal`` names it, or where the function is nested in another (a
    closure's name)."""
    if line is None or not name.isidentifier():
        return None  # (``flag[0]``: an item, not a name a scope binds)
    if any(isinstance(n, ast.Global | ast.Nonlocal) and name in n.names for n in ast.walk(tree)):
        return None
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    holding = [n for n in ast.walk(tree) if isinstance(n, defs) and n.lineno <= line <= (n.end_lineno or 0)]
    if not holding:
        return _own_nodes(tree)
    fn = max(holding, key=lambda n: n.lineno)
    own = _own_nodes(fn) + [a for a in ast.walk(fn.args) if isinstance(a, ast.arg)]
    if any(
        (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)) or _binds_otherwise(n, name)
        for n in own
    ):
        return own
    return _own_nodes(tree) if len(holding) == 1 else None


def _own_nodes(root: ast.AST) -> list[ast.AST]:
    """The nodes of ``root``'s own scope: not inside a function, a lambda or a class it holds (their names)."""
    out: list[ast.AST] = []
    todo = [c for c in ast.iter_child_nodes(root) if not isinstance(c, ast.arguments)]
    while todo:
        n = todo.pop()
        out.append(n)
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(n))
    return out


def _class_at(tree: ast.Module, line: int | None) -> ast.ClassDef | None:
    """The innermost class whose body holds ``line``, where its bases are only ``PLAIN_BASES``; else None."""
    holding = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.ClassDef) and line is not None and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    found = max(holding, key=lambda n: n.lineno, default=None)
    if found is None or any(ast.unparse(b) not in PLAIN_BASES for b in found.bases) or found.keywords:
        return None
    return found


def _rebinds_anything(n: ast.AST, attr: str | None) -> bool:
    """A statement that may bind any name, so that no reading of the file's own bindings is sure: a star import,
    ``globals()``, ``vars()``, ``exec``, ``eval``, and for an attribute flag a ``setattr`` naming it."""
    if isinstance(n, ast.ImportFrom):
        return any(a.name == "*" for a in n.names)
    if not isinstance(n, ast.Call):
        return False
    name = n.func.id if isinstance(n.func, ast.Name) else None
    if name in ("globals", "vars", "exec", "eval"):
        return True
    return (
        name == "setattr"
        and attr is not None
        and any(isinstance(a, ast.Constant) and a.value == attr for a in n.args[1:2])
    )


def _assigned(n: ast.AST) -> list[tuple[ast.expr, ast.expr | None]]:
    """The targets a plain assignment binds, each with its value (None: an annotation with no value)."""
    if isinstance(n, ast.Assign):
        return [(t, n.value) for t in n.targets]
    if isinstance(n, ast.AnnAssign):
        return [(n.target, n.value)]
    return []


def _binds_otherwise(n: ast.AST, name: str) -> bool:
    """Node ``n`` binds ``name`` other than by a plain assignment: what it holds then is not written here."""
    if isinstance(n, ast.AugAssign | ast.NamedExpr):
        return ast.unparse(n.target) == name
    if isinstance(n, ast.For | ast.AsyncFor | ast.comprehension | ast.withitem):
        target = n.optional_vars if isinstance(n, ast.withitem) else n.target
        return target is not None and any(ast.unparse(x) == name for x in ast.walk(target))
    if "." in name:
        return False
    if isinstance(n, ast.arg):
        return n.arg == name
    if isinstance(n, ast.alias):
        return (n.asname or n.name).split(".")[0] == name
    if isinstance(n, ast.ExceptHandler | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return n.name == name
    if isinstance(n, ast.MatchAs | ast.MatchStar):
        return n.name == name
    if isinstance(n, ast.MatchMapping):
        return n.rest == name
    return False


def _event_makers(nodes: list[ast.AST]) -> frozenset[str]:
    """The names a call of which makes a threading event in this file: ``threading.Event`` under the name its
    import gives ``threading``, and ``Event`` where it was imported from threading; neither where the file binds
    that name any other way too (``import multiprocessing as threading``, a conditional ``from multiprocessing
    import Event``, ``Event = mp.Event``)."""
    modules, names = set(), set()
    for n in nodes:
        if isinstance(n, ast.Import):
            modules |= {a.asname or a.name for a in n.names if a.name == "threading"}
        elif isinstance(n, ast.ImportFrom) and n.module == "threading" and not n.level:
            names |= {a.asname or a.name for a in n.names if a.name == "Event"}
    ours = {
        id(a) for n in nodes if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names if _from_threading(n, a)
    }

    def only_ours(name: str) -> bool:
        for n in nodes:
            if isinstance(n, ast.alias):
                if id(n) not in ours and (n.asname or n.name).split(".")[0] == name:
                    return False
            elif any(ast.unparse(t) in (name, f"{name}.Event") for t, _ in _assigned(n)) or _binds_otherwise(n, name):
                return False  # rebound, or its Event replaced (``threading.Event = multiprocessing.Event``)
        return True

    return frozenset({f"{m}.Event" for m in modules if only_ours(m)} | {e for e in names if only_ours(e)})


def _from_threading(n: ast.Import | ast.ImportFrom, a: ast.alias) -> bool:
    if isinstance(n, ast.Import):
        return a.name == "threading"
    return n.module == "threading" and not n.level and a.name == "Event"


def _value_makers(nodes: list[ast.AST]) -> frozenset[str]:
    """The names a call of which makes a multiprocessing Value in this file: ``Value``/``RawValue`` of multiprocessing
    (or its ``sharedctypes``) under the name its import gives it, of a context (``ctx = mp.get_context("fork")``;
    ``mp.get_context`` stands for ``mp.get_context(...).Value``), or imported themselves (``as`` another name too);
    none whose name the file binds any other way too (``import kvstore as mp`` in a function, ``ctx = remote()``)."""
    good: set[int] = set()  # the bindings that make each name
    modules: dict[str, str] = {}  # the prefix written -> the name it binds
    imported: set[str] = set()
    for n in nodes:
        for a in n.names if isinstance(n, ast.Import | ast.ImportFrom) else ():
            if isinstance(n, ast.Import) and a.name in MP_MODULES:
                modules[a.asname or a.name] = a.asname or a.name.split(".")[0]
            elif isinstance(n, ast.ImportFrom) and n.module in MP_MODULES and not n.level and a.name in VALUE_MAKERS:
                imported.add(a.asname or a.name)
            else:
                continue
            good.add(id(a))
    contexts = set()
    for n in nodes:
        for t, v in _assigned(n):
            made = v.func if isinstance(v, ast.Call) else None
            at = isinstance(made, ast.Attribute) and made.attr == "get_context" and ast.unparse(made.value) in modules
            if isinstance(t, ast.Name) and at:
                contexts.add(t.id)
                good.add(id(n))
    names = modules | {c: c for c in contexts | imported}
    kept = {m for m, bound in names.items() if _only(nodes, bound, good)}
    return frozenset(
        (imported & kept)
        | {f"{m}.{v}" for m in kept - imported for v in VALUE_MAKERS}
        | {f"{m}.get_context" for m in kept & set(modules)}
    )


def _sleeps_are_times(nodes: list[ast.AST]) -> bool:
    """``sleep`` and ``time`` are the file's only as ``from time import sleep`` and ``import time``, if at all."""
    good = {
        id(a)
        for n in nodes
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
        if (isinstance(n, ast.Import) and a.name == "time" and not a.asname)
        or (isinstance(n, ast.ImportFrom) and n.module == "time" and a.name == "sleep" and not a.asname)
    }
    return _only(nodes, "sleep", good) and _only(nodes, "time", good)


def _only(nodes: list[ast.AST], name: str, good: set[int]) -> bool:
    """Every binding of ``name`` in the file is one of ``good`` (by id)."""
    for n in nodes:
        if id(n) in good:
            continue
        if isinstance(n, ast.alias):
            if (n.asname or n.name).split(".")[0] == name:
                return False
        elif any(isinstance(t, ast.Name) and t.id == name for t, _ in _assigned(n)) or _binds_otherwise(n, name):
            return False
    return True


def _makes_value(value: ast.expr, makers: frozenset[str]) -> bool:
    f = value.func if isinstance(value, ast.Call) else None
    if f is None:
        return False
    if ast.unparse(f) in makers and not ast.unparse(f).endswith(".get_context"):
        return True  # ``mp.Value``, ``ctx.Value``, ``V`` (``from multiprocessing import Value as V``)
    if not isinstance(f, ast.Attribute) or not isinstance(f.value, ast.Call) or f.attr not in VALUE_MAKERS:
        return False
    return ast.unparse(f.value.func) in makers  # ``mp.get_context("fork").Value``


def _makes_event(value: ast.expr, makers: frozenset[str]) -> bool:
    return isinstance(value, ast.Call) and not value.args and not value.keywords and ast.unparse(value.func) in makers


def private_names(source: str, header: str, line: int, function: str | None) -> tuple[str, ...] | None:
    """The names a ``while`` loop's test (``header``, at ``line``) reads that only the frame running it can rebind:
    names the function the loop is in (``function``, as py-spy names it: its last part) binds itself, a parameter or
    an assignment, that no function, lambda or class nested in it names, no ``global`` or ``nonlocal`` declares and
    no ``:=`` anywhere in it assigns (another thread reaches a name only through a closure or a global). None where
    the loop is not a ``while`` in that function of ``source`` (a module's top level: its names are globals)."""
    head = header.strip()
    try:
        loop = ast.parse(f"{head}{'' if head.endswith(':') else ':'}\n    pass").body[0]
    except (SyntaxError, IndexError):
        return None
    if not isinstance(loop, ast.While) or len(source) > MAX_SOURCE or not function:
        return None
    fn = _function_at(source, line)
    if fn is None or fn.name != function.rsplit(".", 1)[-1]:
        return None  # not the frame's function (exec'd code, a comprehension's frame): nothing said
    a = fn.args
    bound = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}
    shared: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        if isinstance(node, ast.Global | ast.Nonlocal):
            shared.update(node.names)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            shared.add(node.target.id)  # (in a generator another thread runs, it rebinds the function's name)
        elif node is not fn and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            shared.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    read = {n.id for n in ast.walk(loop.test) if isinstance(n, ast.Name)}
    return tuple(sorted((read & bound) - shared))


@functools.lru_cache(maxsize=64)
def _function_at(source: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function of ``source`` whose lines hold ``line``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    holding = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.lineno <= line <= (n.end_lineno or 0)
    ]
    return max(holding, key=lambda n: n.lineno, default=None)


def constants(source: str, names: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """The module-level numbers among ``names`` that the file ``source`` binds once, at its top level, and nowhere
    else (``MAX_RETRIES = 10``), each as written: a loop's bound that no read of locals shows (``range(MAX_RETRIES)``,
    ``if tries >= MAX_RETRIES``)."""
    return _constants(source, names) if names and len(source) <= MAX_SOURCE else ()


@functools.lru_cache(maxsize=64)
def _constants(source: str, names: frozenset[str]) -> tuple[tuple[str, str], ...]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    bound = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    out = []
    for st in tree.body:
        target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else None
        target = st.target if isinstance(st, ast.AnnAssign) else target
        value = st.value if isinstance(st, ast.Assign | ast.AnnAssign) else None
        number = value.operand if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) else value
        if (
            isinstance(target, ast.Name)
            and target.id in names
            and bound.count(target.id) == 1
            and isinstance(number, ast.Constant)
            and isinstance(number.value, int | float)
            and not isinstance(number.value, bool)
            and value is not None
        ):
            out.append((target.id, ast.unparse(value)))
    return tuple(out)
