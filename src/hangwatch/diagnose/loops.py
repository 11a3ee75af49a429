"""Does a spinning loop get anywhere? Judged from the locals of its innermost user frame, read twice
by capture's second pass: a loop that walks its data (an index into a sequence, an iterator, a
value handed to a call) computes; a loop condition whose names never change while the CPU burns,
or a counter that only counts while nothing else changes, is a spin; a closed loop (integer locals,
arithmetic, no call) whose body, run on the numbers read, comes back to the same state is a cycle."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from hangwatch.capture.flags import event_tested, value_tested
from hangwatch.diagnose.cycle import closed_cycle
from hangwatch.records.evidence import MP_VALUE, LocalsRead
from hangwatch.records.values import frozen

if TYPE_CHECKING:
    from hangwatch.diagnose.views import ThreadView

NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
KEYWORDS = frozenset(
    {
        "while",
        "for",
        "in",
        "not",
        "and",
        "or",
        "is",
        "None",
        "True",
        "False",
        "if",
        "else",
        "lambda",
        "len",
        "range",
        "enumerate",
        "zip",
    }
)


@frozen
class LoopMotion:
    """What the locals say: whether the loop advanced, and the evidence text to quote."""

    advanced: bool
    evidence: str
    seconds: float
    counting: bool = False  # a spin that gets nowhere, proven: a counter that counts nothing, or a frozen condition
    frozen: bool = False  # the proof is a condition nothing in the loop can change

    @property
    def proof_fact(self) -> str:
        """The proof of a hang in words (for a ``counting`` motion)."""
        return f"{'a loop that cannot end' if self.frozen else 'a counting spin'}: {self.evidence}"


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def loop_motion(reads: tuple[LocalsRead, ...], alone: bool = False, private: bool = True) -> LoopMotion | None:
    """Compare the first and last read of the same function; None without two such reads. ``alone``: no other
    thread of the process runs Python that could change what the loop reads, or (``private``: no watchdog Timer may
    interrupt it) none could (``only_its_own``); without it, a spin is never proven (a thread may set the flag it
    waits for: ``while not state["done"]: spins += 1``)."""
    private = private and not alone and bool(reads) and only_its_own(reads[-1])
    motion = _motion(reads, alone or private)
    if motion is not None and motion.counting and private:
        own = "; another thread lives, but none can reach what it reads: locals only its own frame binds (no closure"
        return replace(motion, evidence=f"{motion.evidence}{own} names them), holding values nothing changes in place")
    if motion is None or not motion.counting or alone:
        return motion
    return replace(
        motion,
        counting=False,
        frozen=False,
        evidence=f"{motion.evidence}; but another thread of the process runs Python and may change what the loop reads",
    )


IMMUTABLE = (int, float, complex, str, bytes, bool, type(None))
PLAIN = (
    ast.Name,
    ast.Constant,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.expr_context,
    ast.cmpop,
    ast.boolop,
    ast.unaryop,
    ast.operator,
    ast.Pass,
    ast.Assign,
    ast.AugAssign,
)


def only_its_own(read: LocalsRead) -> bool:
    """Whether no other thread can change what a ``while`` loop reads (``while i < n: pass``, ``while n >= 0: n +=
    1``): its test and its body read and assign names only (no call, attribute or item), each one only its own frame
    can rebind (``LocalsRead.private``: its function binds it, no closure names it, no global or nonlocal declares
    it), holding a value read whole that nothing changes in place (a number, a string, None, a tuple of them). A
    debugger's write into a frame aside, another thread cannot reach them, whether one lives or not."""
    loop = parse_loop(read.body or "")
    if read.private is None or not isinstance(loop, ast.While) or loop.orelse:
        return False
    values = dict(read.values)
    for node in (n for part in (loop.test, *loop.body) for n in ast.walk(part)):
        if not isinstance(node, PLAIN):
            return False  # a call, an attribute, an item: what it reads may be another thread's
        if isinstance(node, ast.Name) and not _immutable_local(node.id, read.private, values):
            return False
    return True


def _immutable_local(name: str, private: tuple[str, ...], values: dict[str, str]) -> bool:
    value = values.get(name)
    if name not in private or value is None or not _read_whole(value):
        return False
    try:
        held = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return isinstance(held, IMMUTABLE) or (isinstance(held, tuple) and all(isinstance(x, IMMUTABLE) for x in held))


def _motion(reads: tuple[LocalsRead, ...], alone: bool) -> LoopMotion | None:
    if len(reads) < 2:
        return None
    first, last = reads[0], reads[-1]
    if (first.file, first.function) != (last.file, last.function):
        return None
    seconds = max(0.0, last.at - first.at)
    before, after = dict(first.values), dict(last.values)
    if not before and not after:
        return None  # no locals were read (a module's top level has none): the locals say nothing
    changed = {n: (before[n], after[n]) for n in before if n in after and before[n] != after[n]}
    header = last.loop
    cond_names: set[str] = set()
    if header is not None and header.startswith("while"):
        cond_names = {n for n in NAME.findall(header[len("while") :]) if n not in KEYWORDS and n in after}
    elif header is not None and header.startswith("for"):
        target = header[len("for") :].split(" in ", 1)[0]
        cond_names = {n for n in NAME.findall(target) if n in after}
    grown = sorted(
        n for n, (a, b) in changed.items() if (x := _int(a)) is not None and (y := _int(b)) is not None and y > x
    )
    # A condition that calls out (``while time.monotonic() < until``: the clock, a file, another process) may turn
    # with no local changing: what only counts beside it waits for that, and proves nothing.
    worldly = reads_the_world(last.body, after)
    spin = None if worldly else _counts_only(last, changed, grown, seconds)
    if cond_names:
        moving = sorted(n for n in cond_names if n in changed)
        if moving and spin is not None:
            return spin
        if moving:
            cycle = next((c for r in reads if (c := closed_cycle(r, parse_loop(r.body or ""))) is not None), None)
            if cycle is not None:  # its names move, round and round: a cycle it never leaves
                return LoopMotion(False, cycle, seconds, counting=True, frozen=True)
            n = moving[0]
            return LoopMotion(True, f"`{header}`: `{n}` {changed[n][0]} -> {changed[n][1]} in {seconds:.1f} s", seconds)
        # The loop's own names stayed; another local may still change with the data (a `for` over repeated
        # values, a `while not done:` whose body accumulates): that is work, unless it only counts, or unless
        # nothing the body does can ever change what the condition reads (checked below, first).
        stayed = ", ".join(f"`{n}` stayed {after[n]}" for n in sorted(cond_names))
        steady = all(
            (r.file, r.function) == (last.file, last.function)
            and all(dict(r.values).get(n) == after[n] for n in cond_names)
            for r in reads
        )
        frozen = frozen_condition(last.body, after) if steady and alone else None
        if frozen is not None:  # what the condition reads stayed, and the body can change none of it
            return LoopMotion(
                False,
                f"`{header}`: {stayed} for {seconds:.1f} s while the CPU burned; {frozen}",
                seconds,
                counting=True,
                frozen=True,
            )
        working = sorted(
            n
            for n in changed
            if n not in cond_names and (worldly or last.body is None or not counts_only(last.body, n))
        )
        if working:
            n = working[0]
            return LoopMotion(True, f"`{header}`: `{n}` {changed[n][0]} -> {changed[n][1]} in {seconds:.1f} s", seconds)
        counters = sorted(n for n in changed if n not in cond_names)
        if counters:  # the loop's names stayed and all that changed only counts: a counting spin
            n = counters[0]
            return LoopMotion(
                False,
                f"`{header}`: {stayed} for {seconds:.1f} s while the CPU burned; `{n}` only "
                f"counts ({changed[n][0]} -> {changed[n][1]})",
                seconds,
                counting=True,
            )
        return LoopMotion(False, f"`{header}`: {stayed} for {seconds:.1f} s while the CPU burned", seconds)
    if spin is not None:
        return spin
    if grown:
        n = grown[0]
        return LoopMotion(True, f"`{n}` {changed[n][0]} -> {changed[n][1]} in {seconds:.1f} s", seconds)
    if changed:
        return None  # values move but nothing counts: no verdict from the locals
    shown = ", ".join(f"`{n}` = {v}" for n, v in list(after.items())[:4]) or "no locals"
    return LoopMotion(False, f"locals unchanged over {seconds:.1f} s ({shown})", seconds)


def _counts_only(
    last: LocalsRead, changed: dict[str, tuple[str, str]], grown: list[str], seconds: float
) -> LoopMotion | None:
    """A spin whose only change is a counter: the one local that changed is an integer that grew, and
    the loop's source uses it for nothing but counting."""
    if len(changed) != 1 or not grown or last.body is None or not counts_only(last.body, grown[0]):
        return None
    n = grown[0]
    return LoopMotion(
        False,
        f"`{n}` only counts ({changed[n][0]} -> {changed[n][1]} in {seconds:.1f} s): nothing "
        f"else in the loop changes and `{n}` is used for nothing but counting, so the loop spins",
        seconds,
        counting=True,
    )


def parse_loop(source: str) -> ast.stmt | None:
    """The loop statement of a loop's source (header and body, dedented; a header alone gets a ``pass``),
    or None where it does not parse."""
    try:
        tree = ast.parse(source.strip() + ("\n    pass" if source.rstrip().endswith(":") else ""))
    except SyntaxError:
        return None
    return tree.body[0] if tree.body else None


# `for i in itertools.count()`: numbers, no data, no end. A `range` ends at its stop, however far: counting through
# one is not a loop that cannot end.
COUNTING_ITERABLES = frozenset({"count"})


def counts_only(source: str, name: str) -> bool:
    """Whether ``name`` is used in the loop ``source`` for nothing but counting: incremented
    (``n += 1``, ``n = n + 1``), compared in a ``while`` condition, or the target of a ``for`` over
    ``itertools.count``, in a body that does nothing else (no call, no other assignment). Used any
    other way (an index, a call's argument, another computation, a ``for`` over real data or a ``range``,
    which ends), or in a body that does other work, the loop may be working. Source that does not parse is
    not judged."""
    loop = parse_loop(source)
    if not isinstance(loop, ast.While | ast.For):
        return False
    counting: set[int] = set()  # ids of the Name nodes that only count
    if isinstance(loop, ast.For):
        it = loop.iter
        fn = it.func if isinstance(it, ast.Call) else None
        fname = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
        if fname not in COUNTING_ITERABLES or not isinstance(loop.target, ast.Name) or loop.target.id != name:
            return False
        counting.add(id(loop.target))
    else:
        counting |= {id(n) for n in ast.walk(loop.test) if isinstance(n, ast.Name) and n.id == name}
    for node in ast.walk(loop):
        counting |= step[2] if (step := step_of(node, name)) is not None else set()
    uses = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name]
    if not uses or not all(id(n) in counting for n in uses):
        return False
    if (
        isinstance(loop, ast.While)
        and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(loop.test))
        and not _counts_away(loop, name)
    ):
        return False  # `while i < n: i += 1` ends when it gets there
    # The body does nothing but count: no call (`out.append(tok.encode(x))` works, whatever its locals
    # show), no other assignment, nothing that could change what the loop reads.
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(
                node,
                ast.Call
                | ast.Yield
                | ast.YieldFrom
                | ast.Await
                | ast.Delete
                | ast.Global
                | ast.Nonlocal
                | ast.Subscript
                | ast.Attribute,
            ):
                return False
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(not (isinstance(t, ast.Name) and t.id == name) for t in targets):
                    return False
    return True


def _counts_away(loop: ast.While, name: str) -> bool:
    """Whether each step of ``name`` moves it away from ending the loop: its test is one comparison of ``name`` with
    another value (``n >= 0``, ``0 <= n``) that stays true as ``name`` grows (or shrinks, for a step down), and every
    step has the same sign. ``while n >= 0: n += 1`` never ends; ``while i < n: i += 1`` does."""
    test = loop.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(left, ast.Name) and left.id == name:
        grows_away = isinstance(op, ast.Gt | ast.GtE)
        shrinks_away = isinstance(op, ast.Lt | ast.LtE)
    elif isinstance(right, ast.Name) and right.id == name:
        grows_away = isinstance(op, ast.Lt | ast.LtE)
        shrinks_away = isinstance(op, ast.Gt | ast.GtE)
    else:
        return False
    signs = set()
    # every change of ``name`` in the loop is such a step: counts_only read them all before it asks
    for op_, value, _ in filter(None, (step_of(node, name) for node in ast.walk(loop))):
        step = value.value if isinstance(value.value, int | float) else None
        if step is None or step == 0 or not isinstance(op_, ast.Add | ast.Sub):
            return False
        signs.add((step > 0) == isinstance(op_, ast.Add))
    return (signs == {True} and grows_away) or (signs == {False} and shrinks_away)


def counter_name(node: ast.AST) -> str | None:
    """A name a loop may count with, as written: a local (``tries``), or an attribute of one (``self.tries``)."""
    if isinstance(node, ast.Name):
        return node.id
    owner = counter_name(node.value) if isinstance(node, ast.Attribute) else None
    return f"{owner}.{node.attr}" if owner is not None and isinstance(node, ast.Attribute) else None


def step_of(node: ast.AST, name: str) -> tuple[ast.operator, ast.Constant, set[int]] | None:
    """``name += c``, ``name = name <op> c`` or ``name = c + name``: its operator, its constant, and the ids of the
    nodes it counts with. ``name`` as ``counter_name`` spells it (``self.tries``)."""
    if isinstance(node, ast.AugAssign) and counter_name(node.target) == name:
        return (node.op, node.value, {id(node.target)}) if isinstance(node.value, ast.Constant) else None
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and counter_name(node.targets[0]) == name):
        return None
    b, t = node.value, node.targets[0]
    if not isinstance(b, ast.BinOp):
        return None
    if counter_name(b.left) == name and isinstance(b.right, ast.Constant):
        return b.op, b.right, {id(t), id(b.left)}
    if counter_name(b.right) == name and isinstance(b.left, ast.Constant) and isinstance(b.op, ast.Add):
        return b.op, b.left, {id(t), id(b.right)}  # (`tries = 1 + tries`)
    return None


PURE_BUILTINS = frozenset({"len", "min", "max", "abs", "sum", "any", "all", "int", "float", "bool", "isinstance"})
EXITS = (
    ast.Break,
    ast.Return,
    ast.Raise,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
    ast.Global,
    ast.Nonlocal,
    ast.Try,
    ast.With,
)  # (a loop whose body reads no more than its header, ``frozen_condition``, may not delete a name either)


# Types whose reads see another process's, another thread's or the kernel's state: a shared Value or Array, a manager's
# proxy, shared memory, a memoryview or mmap, a tensor or array (shared memory too), a queue, an event, a lock, a
# socket, a process, a thread, a future. py-spy shows an object as ``<Type at 0x7f...>``.
EXTERNAL_STATE = re.compile(
    r"^<\w*(Synchronized|Proxy|SharedMemory|ShareableList|memoryview|mmap|Tensor|ndarray|Value|Array|Event|"
    r"Condition|Semaphore|Queue|socket|Popen|Process|Thread|Future|Connection|Barrier|Lock)\w* at 0x",
    re.IGNORECASE,
)


def own_state(value: str | None) -> bool:
    """Whether reading a local (its attributes, its items) sees only state its own thread keeps: a plain value read
    whole (a number, a string, a list or dict of them), or an object of a type that holds no one else's state."""
    if value is None or "..." in value or "***" in value:
        return False
    if value.startswith("<"):
        return EXTERNAL_STATE.search(value) is None
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def reads_the_world(source: str | None, values: dict[str, str]) -> bool:
    """Whether a ``while`` loop's condition may see the world outside its thread's locals, and so turn with no local
    changing: a call (``time.monotonic()``, ``os.path.exists(p)``, ``q.empty()``) other than a pure builtin or a
    method of a plain local (``state.get("ready")`` on a dict); an attribute or item of a shared value, a proxy, a
    tensor (``flag.value``), a module or a global, or of anything but a local (``self.a.b``); an await or yield."""
    loop = parse_loop(source or "")
    if not isinstance(loop, ast.While):
        return False
    for node in ast.walk(loop.test):
        if isinstance(node, ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr):
            return True
        if isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id in PURE_BUILTINS:
                continue
            if not (isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name)):
                return True
            value = values.get(fn.value.id)
            if value is None or value.startswith("<") or not own_state(value):
                return True  # a method of an object: it may read anything
        elif isinstance(node, ast.Attribute | ast.Subscript):
            if not isinstance(node.value, ast.Name) or not own_state(values.get(node.value.id)):
                return True
        elif isinstance(node, ast.Name) and EXTERNAL_STATE.search(values.get(node.id) or ""):
            return True  # read whole by a builtin or a comparison (``len(proxy)``, ``not event``): still theirs
    return False


def _read_whole(value: str) -> bool:
    """Whether a local's repr shows all of its value: not cut short (py-spy's ``...``, ours), not redacted,
    not an object shown only by its address."""
    return "..." not in value and "***" not in value and not (value.startswith("<") and " at 0x" in value)


def frozen_condition(source: str | None, values: dict[str, str]) -> str | None:
    """Why a ``while`` loop can never end, in words, or None. The loop ends only when its condition turns false
    (no ``break``, ``return``, ``raise``, ``yield`` or ``try`` in its body). If the body calls nothing (no
    function of the user's or a library's could reach what the condition reads) and every name the condition
    reads is a local whose value was read whole, then the body changes the condition only by assigning those
    names: and the caller measured that they stayed. An object the condition reads an attribute of (``self``)
    may be opaque only if the body never touches it. ``values``: the locals' last reads."""
    if not source:
        return None
    loop = parse_loop(source)
    if not isinstance(loop, ast.While) or loop.orelse or isinstance(loop.test, ast.Constant):
        return None
    for node in ast.walk(loop.test):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS):
            return None
        if isinstance(node, ast.NamedExpr | ast.Lambda | ast.Await | ast.Yield):
            return None
    body_names: set[str] = set()
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(node, (*EXITS, ast.Delete, ast.Call)):
                return None
            if isinstance(node, ast.Name):
                body_names.add(node.id)
    read = {n.id for n in ast.walk(loop.test) if isinstance(n, ast.Name) and n.id not in PURE_BUILTINS}
    if not read:
        return None
    for name in read:
        value = values.get(name)
        if value is None:
            return None  # a global, or a local not read: another thread or frame may change it
        if not _read_whole(value) and (name in body_names or not value.startswith("<")):
            return None  # its value was not read whole, and the body may change it
    if reads_the_world(source, values):
        return None  # a shared value, a proxy, a tensor: another process may change it
    header = ast.get_source_segment(source.strip(), loop.test) or "?"
    return (
        f"`while {header}:` can end only when that turns false; its body calls nothing and has no break, return "
        f"or raise, so what it reads can change only by the body's own assignments, and they left it as it was"
    )


def is_sleep(fn: ast.expr) -> bool:
    """``time.sleep`` or a bare ``sleep`` (``from time import sleep``): the only calls a loop with no exit may make. An
    object's own ``sleep`` (``backoff.sleep()``) is the user's code, which may raise at its deadline."""
    if isinstance(fn, ast.Name):
        return fn.id == "sleep"
    return (
        isinstance(fn, ast.Attribute)
        and fn.attr == "sleep"
        and isinstance(fn.value, ast.Name)
        and fn.value.id == "time"
    )


def stop_set_by_another(loop: ast.While, value: bool = False) -> str | None:
    """The event (its name, as written) whose being set is the only way out of ``loop``: its test is ``not
    X.is_set()`` or ``not X.wait(...)``, and its body does nothing but ``pass``, sleep or wait on that same ``X``
    (no break, return or raise, no other call: nothing in it can set ``X`` or leave); ``value``: the test reads a
    multiprocessing Value's ``X.value`` against a constant (``flags.value_tested``) instead. None otherwise."""
    event = value_tested(loop.test) if value else event_tested(loop.test)
    if event is None:
        return None
    for stmt in loop.body:
        if isinstance(stmt, ast.Pass):
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        arguments = (*call.args, *(k.value for k in call.keywords)) if isinstance(call, ast.Call) else ()
        if not isinstance(call, ast.Call) or any(isinstance(n, ast.Call) for a in arguments for n in ast.walk(a)):
            return None  # a call in its arguments (``sleep(seconds=self.backoff())``) may set the flag, raise or exit
        fn = call.func
        waits = isinstance(fn, ast.Attribute) and fn.attr == "wait" and ast.unparse(fn.value) == event
        if not (waits or is_sleep(fn)):
            return None
    return event


def never_exits(source: str | None, private_wait: bool = False, flag: str | None = None) -> str | None:
    """Why a loop can never end by itself, in words, or None: a ``while True:`` (any constant true test) whose body
    has no ``break``, ``return``, ``raise``, ``yield`` or ``await`` and calls nothing but ``sleep`` (a call could
    raise or exit): it sleeps for ever, only a signal ends it; or, where the thread was read waiting in a futex
    private to its process (``private_wait``: a threading event's, never a multiprocessing one's, which another
    process may set), a loop whose only way out is that event being set (``stop_set_by_another``), or (``flag``
    ``MP_VALUE``) a multiprocessing Value's number changing. Source that does not parse is not judged."""
    if not source:
        return None
    loop = parse_loop(source)
    if not isinstance(loop, ast.While) or loop.orelse:
        return None
    event = stop_set_by_another(loop, flag == MP_VALUE) if private_wait else None
    if event is not None:
        header = ast.get_source_segment(source.strip(), loop.test) or "?"
        if flag == MP_VALUE:
            return (
                f"`while {header}:` ends only when `{event}` changes, and its body does nothing but wait: its file "
                "binds it only to multiprocessing's Value, and no other process of the job lived in the window to "
                "write it while the loop read it again and again"
            )
        return (
            f"`while {header}:` ends only when `{event}` is set, and its body does nothing but wait: only another "
            "thread of its process (or a signal's handler) can set it"
        )
    if not isinstance(loop.test, ast.Constant) or not loop.test.value:
        return None
    for stmt in loop.body:
        for node in ast.walk(stmt):
            if isinstance(node, EXITS):
                return None
            if isinstance(node, ast.Call) and not is_sleep(node.func):
                return None
    header = ast.get_source_segment(source.strip(), loop.test) or "True"
    return f"`while {header}:` has no break, return or raise, and its body does nothing but sleep: it never ends"


CALL = re.compile(r"[\w\])]\s*\(")  # a call: a name, a subscript or a call's result, then "("


def one_long_call(t: ThreadView) -> bool:
    """The thread sat on the very same line, with the very same stack, in every sample, and that line makes a call
    and is not a loop's header: it is inside one long call that holds the GIL (a sort, a regex, a tokenizer over a
    big batch, sum over a huge range), not spinning in a Python loop (whose samples land on the loop's header, or
    move between lines and frames; a line with no call, ``x = (x * 2) % 6``, is a loop's body, done in
    nanoseconds)."""
    stacks = t.stacks
    if len(stacks) < 2 or t.stack_changed:
        return False
    code = (t.user_frame.code if t.user_frame is not None else None) or ""
    head = code.lstrip()
    return bool(CALL.search(head)) and not head.startswith(("while ", "while(", "for ", "if ", "elif "))
