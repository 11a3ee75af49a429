"""The import structure (docs/architecture.md): no cycle between hangwatch's modules, counting the imports inside
functions (they hide cycles), and nothing in ``records/`` imports from above it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "hangwatch"


def _name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in SRC.rglob("*.py") if "_autobeat" not in p.parts}  # the hook imports no hangwatch


def _imports_by_place(path: Path) -> tuple[set[str], list[tuple[int, set[str]]]]:
    """A module's hangwatch imports at its top (not under TYPE_CHECKING), and those inside its functions (line,
    modules)."""
    tree = ast.parse(path.read_text())
    skipped = {  # typing only, or a package's lazy re-exports (its ``__getattr__``)
        id(m)
        for n in ast.walk(tree)
        if (isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))
        or (isinstance(n, ast.FunctionDef) and n.name == "__getattr__")
        for m in ast.walk(n)
    }
    in_function = {
        id(m)
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        for m in ast.walk(n)
        if m is not n
    }
    top: set[str] = set()
    local: list[tuple[int, set[str]]] = []
    for n in ast.walk(tree):
        if id(n) in skipped:
            continue
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("hangwatch"):
            module = n.module or ""
            subs = {f"{module}.{a.name}" for a in n.names} & MODULES.keys()
            targets = (subs | ({module} if len(subs) < len(n.names) else set())) & MODULES.keys()
        elif isinstance(n, ast.Import):
            targets = {a.name for a in n.names} & MODULES.keys()
        else:
            continue
        if id(n) in in_function:
            local.append((n.lineno, targets))
        else:
            top |= targets
    return top, local


def _imports(path: Path) -> set[str]:
    """The hangwatch modules a module imports, at its top or inside a function; not under TYPE_CHECKING, and not a
    package's lazy re-exports (its ``__getattr__``)."""
    top, local = _imports_by_place(path)
    return top.union(*(targets for _, targets in local)) - {_name(path)}


GRAPH = {m: _imports(p) for m, p in MODULES.items()}


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_one_that_imports_it_back():
    assert _cycles() == []


def test_the_records_import_nothing_from_above_them():
    allowed = {"hangwatch.causes"}
    upward = {
        f"{m} imports {i}"
        for m, deps in GRAPH.items()
        if m.startswith("hangwatch.records")
        for i in deps
        if not i.startswith("hangwatch.records") and i not in allowed
    }
    assert not upward, sorted(upward)


DETECTOR_WRITES = {
    "progress",
    "set_phase",
    "check",
    "extend",
    "hold_until",
    "shift",
    "suspect_now",
    "declare_hung",
    "reopen",
}


def _detector(n: ast.expr) -> bool:
    return (isinstance(n, ast.Attribute) and n.attr == "detector") or (isinstance(n, ast.Name) and n.id == "det")


def test_the_stall_detector_is_written_by_the_run_loop_alone():
    """Collaborators return outcomes (supervise/attempt.py); supervise/supervisor.py applies them: no other module
    calls a method that changes an attempt's detector, or assigns to it."""
    allowed = {SRC / "supervise" / "supervisor.py", SRC / "supervise" / "progress" / "detector.py"}
    writes = []
    for path in sorted((SRC / "supervise").rglob("*.py")):
        if path in allowed:
            continue
        for n in ast.walk(ast.parse(path.read_text())):
            call = isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in DETECTOR_WRITES
            if call and _detector(n.func.value):  # type: ignore[union-attr]
                writes.append(f"{path.relative_to(SRC)}:{n.lineno}")
            if isinstance(n, ast.Assign | ast.AugAssign):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                at = [t for t in targets if isinstance(t, ast.Attribute | ast.Subscript) and _detector(t.value)]
                writes += [f"{path.relative_to(SRC)}:{n.lineno}" for _ in at]
    assert not writes, writes
    # and the loop does write it: the test reads what it claims to
    loop = ast.parse((SRC / "supervise" / "supervisor.py").read_text())
    called = {n.func.attr for n in ast.walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert called >= DETECTOR_WRITES


def test_supervises_rooms_import_along_at_most_half_of_their_pairs():
    """supervise/'s rooms (its folders and top-level modules) depend on each other through the run's context and
    the attempt, not on each other's insides: counted at run time, as the cycles are."""

    def room(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "supervise" else None

    rooms = {room(m) for m in GRAPH} - {None}
    pairs = {frozenset((room(m), room(d))) for m, deps in GRAPH.items() for d in deps if room(m) and room(d)}
    pairs = {p for p in pairs if len(p) == 2}
    possible = len(rooms) * (len(rooms) - 1) // 2
    assert len(rooms) >= 9 and len(pairs) <= possible / 2, (
        len(pairs),
        possible,
        sorted(str(sorted(map(str, p))) for p in pairs),
    )


def test_an_import_inside_a_function_defers_a_module_its_own_module_does_not_load():
    """Imports inside functions keep `hangwatch run` and `import hangwatch` light (docs/architecture.md#imports):
    each must defer a module that importing its own module does not already load (its top-level imports, their
    top-level imports, and the packages above each); one that defers nothing belongs at the top."""
    places = {m: _imports_by_place(p) for m, p in MODULES.items()}

    def loaded(module: str) -> set[str]:
        seen: set[str] = set()
        todo = [module]
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                parts = m.split(".")
                todo += [*places[m][0], *({".".join(parts[:i]) for i in range(1, len(parts))} & MODULES.keys())]
        return seen

    pointless = [
        f"{MODULES[m].relative_to(SRC)}:{line} imports {sorted(targets)}"
        for m, (_, local) in places.items()
        for line, targets in local
        if targets and targets <= loaded(m)
    ]
    assert sum(len(local) for _, local in places.values()) > 50  # it reads what it claims to
    assert not pointless, pointless


# What the run's context shares: services every collaborator calls (they guard their own state), and records.
CONTEXT_SERVICES = {"cfg", "clock", "rundir", "notifier", "output", "status", "intake", "policy", "remedies", "wake"}
MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "add", "discard"}


def test_each_record_the_run_shares_has_one_writer():
    """Every field of the run's context that is state, not a service (the attempts, checkpoints, hangs, the run's
    end, the ledger's counts...), is assigned or changed in one module of supervise/ only."""

    def on_context(n: ast.expr) -> bool:
        return (isinstance(n, ast.Name) and n.id == "ctx") or (isinstance(n, ast.Attribute) and n.attr == "ctx")

    writers: dict[str, set[str]] = {}
    for path in sorted((SRC / "supervise").rglob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.Assign | ast.Delete):
                targets = list(n.targets)
            elif isinstance(n, ast.AugAssign | ast.AnnAssign):
                targets = [n.target]
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS:
                targets = [n.func.value]
            else:
                continue
            for target in [x for t in targets for x in ([*t.elts] if isinstance(t, ast.Tuple) else [t])]:
                t = target
                while isinstance(t, ast.Subscript):
                    t = t.value
                if not isinstance(t, ast.Attribute):
                    continue
                if on_context(t.value) and t.attr not in CONTEXT_SERVICES:
                    name = t.attr
                elif isinstance(t.value, ast.Attribute) and t.value.attr == "ledger" and on_context(t.value.value):
                    name = f"ledger.{t.attr}"
                else:
                    continue
                writers.setdefault(name, set()).add(str(path.relative_to(SRC)))
    assert {"attempts", "exit_status", "ledger.heals"} <= writers.keys()  # it reads what it claims to
    shared = {name: sorted(files) for name, files in writers.items() if len(files) > 1}
    assert not shared, shared


def test_every_py_spy_read_of_a_job_is_built_where_a_stop_is_refused_mid_write():
    """A blocking read stops the process, and a stop cuts a blocked write short (the job loses bytes): every
    ``py-spy dump`` command is built by ``capture.stacks.dump_command``, which asks ``why_not_stop`` first. The
    doctor's own child (never a job) is the one exception."""
    built_here = {"hangwatch.capture.stacks", "hangwatch.doctor.checks"}
    elsewhere = []
    for name, path in MODULES.items():
        if name in built_here:
            continue
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.List) and any(isinstance(e, ast.Constant) and e.value == "dump" for e in n.elts):
                elsewhere.append(f"{name}:{n.lineno}")
    assert not elsewhere, elsewhere


STATE = SRC / "diagnose" / "state.py"
# What a running loop's locals say (does it advance? has it a way out?) and the ladders that read a process's or a
# thread's state from its samples: asked of diagnose/state.py, computed nowhere else.
STATE_READS = frozenset({"loop_motion", "never_exits"})
STATE_LADDERS = frozenset(
    {
        "activity",
        "process_state",
        "thread_state",
        "running_state",
        "holder_state",
        "moving",
        "progressing",
        "one_long_call",
    }
)
STATE_WORDS = frozenset(
    {"gone", "stopped", "spinning", "working", "looping", "long_sleep", "asleep", "wakes", "idle", "blocked", "brief"}
)


def _called(n: ast.AST) -> str | None:
    if not isinstance(n, ast.Call):
        return None
    f = n.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def test_only_the_state_module_decides_whether_a_process_or_thread_works():
    """[1/5]: one reading of what each process and thread is doing. Outside ``diagnose/state.py`` (and
    ``diagnose/loops.py``, which reads the locals for it) no module calls the locals' readers, defines a state
    ladder of its own (of a process, a thread, a holder outside the views, the job as a whole), or keeps a table from a
    state to a verdict (the child-wait rule had one, the DataLoader worker a ladder, the scene and the lock-wait
    namer their own: all now ask ``state``). It fails on a second answer spelled these ways; one written as a plain
    ``if`` ladder under another name is for review to find (``ends.rank_end`` reads a rank's state from
    ``thread_state`` and only bounds its sleep by the collective's timeout)."""
    loops = SRC / "diagnose" / "loops.py"
    offenders = []
    for path in SRC.rglob("*.py"):
        if path in (STATE, loops):
            continue
        tree = ast.parse(path.read_text())
        for n in ast.walk(tree):
            if _called(n) in STATE_READS:
                offenders.append(f"{path.relative_to(SRC)}:{n.lineno} calls {_called(n)}")
            if isinstance(n, ast.FunctionDef) and n.name in STATE_LADDERS:
                offenders.append(f"{path.relative_to(SRC)}:{n.lineno} defines {n.name}")
            if isinstance(n, ast.Dict):
                keys = {k.value for k in n.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
                if len(keys & STATE_WORDS) >= 2 and "Verdict." in ast.unparse(n):
                    offenders.append(f"{path.relative_to(SRC)}:{n.lineno} maps states to verdicts")
    assert not offenders, offenders
    tree = ast.parse(STATE.read_text())  # the test reads what it says: the state module does call them
    assert {_called(n) for n in ast.walk(tree)} >= STATE_READS


# [1/5]: the verdict stage (the engine, the graph's chains, the verdict module) and the makers of proofs (proof.py,
# the records) alone create proofs and set verdicts. The namers that did last (the ranks' across one node and across
# nodes, the kernel's and the GPUs') now attach what their waiters wait for (``Hit.end``, diagnose/ends.py), which
# the verdict stage judges (``verdict.by_end``).
VERDICT_STAGE = frozenset(
    {"diagnose/engine.py", "diagnose/verdict.py", "diagnose/graph.py", "diagnose/proof.py", "records/incident.py"}
)
# Verdicts that are not a look's judgment, each set in one place: the clock's (alive, but past the job's own bound,
# --max-slow or --rendezvous-timeout; no progress seen for long: slow), an exit's (the job exited with a status:
# crashed) and another node's (the node that judged the hang, adopted by the others).
OTHER_VERDICTS = frozenset({"diagnose/bounds.py", "supervise/stall/act.py", "supervise/nodes/follow.py"})
PROOF_MAKERS = frozenset({"hang", "work"})


def _proof_spellings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a module calls the proof module by (``proof``, or its alias), and the names it calls ``hang``,
    ``work`` and ``Proof`` by when it imports them themselves (aliases included)."""
    modules, makers = {"proof"}, set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module == "hangwatch.diagnose":
            modules |= {a.asname or a.name for a in n.names if a.name == "proof"}
        elif isinstance(n, ast.Import):
            modules |= {a.asname for a in n.names if a.name == "hangwatch.diagnose.proof" and a.asname}
        elif isinstance(n, ast.ImportFrom) and n.module == "hangwatch.diagnose.proof":
            makers |= {a.asname or a.name for a in n.names if a.name in PROOF_MAKERS}
        elif isinstance(n, ast.ImportFrom) and n.module == "hangwatch.records.incident":
            makers |= {a.asname or a.name for a in n.names if a.name == "Proof"}
    return modules, makers | {"Proof"}


def _sets_a_verdict(n: ast.Call) -> bool:
    """``Hit(finding, verdict)`` with a verdict (``named(finding)``, a ``Hit`` with ``None``, leaves it to the verdict
    stage), ``Diagnosis(verdict, ...)``, or a ``verdict=`` given to either, to an ``Incident`` or to ``replace``,
    unless it is one a diagnosis carries (``Diagnosis(d.verdict, ...)``: findings revised, the verdict kept)."""
    name = _called(n)
    given = [k.value for k in n.keywords if k.arg == "verdict"]
    if name in ("Hit", "Diagnosis"):
        given += n.args[1:2] if name == "Hit" else n.args[:1]
    elif name not in ("replace", "Incident"):
        return False

    def carried(v: ast.expr) -> bool:  # ``d.verdict``, ``merged.verdict or d.verdict``
        return all(isinstance(x, ast.Attribute) and x.attr == "verdict" for x in getattr(v, "values", [v]))

    return any(not (isinstance(v, ast.Constant) and v.value is None) and not carried(v) for v in given)


def test_proofs_and_verdicts_are_made_only_by_the_verdict_stage():
    """[1/5]: one verdict, from the chain. A proof is made by ``hang``/``work`` of diagnose/proof.py or by
    ``Proof(...)``, however the module spells them (``proof.work``, ``from ...proof import work as w``); a verdict
    is set by building a ``Hit`` or a ``Diagnosis`` with one, or by ``replace(..., verdict=...)``. No module outside
    the verdict stage does either, but the three that set a verdict that is not a look's (``OTHER_VERDICTS``); the
    test reads that the verdict stage does (it would pass vacuously if the makers were renamed)."""
    proves: set[str] = set()
    sets: set[str] = set()
    for path in SRC.rglob("*.py"):
        if "_autobeat" in path.parts:
            continue
        rel = str(path.relative_to(SRC))
        tree = ast.parse(path.read_text())
        modules, makers = _proof_spellings(tree)
        for n in ast.walk(tree):
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            by_module = isinstance(f, ast.Attribute) and f.attr in PROOF_MAKERS and ast.unparse(f.value) in modules
            if by_module or (isinstance(f, ast.Name) and f.id in makers):
                proves.add(rel)
            if _sets_a_verdict(n):
                sets.add(rel)
    assert not proves - VERDICT_STAGE, sorted(proves - VERDICT_STAGE)
    assert not sets - VERDICT_STAGE - OTHER_VERDICTS, sorted(sets - VERDICT_STAGE - OTHER_VERDICTS)
    assert {"diagnose/verdict.py", "diagnose/proof.py"} <= proves and "diagnose/verdict.py" in sets
    assert sets >= OTHER_VERDICTS, sorted(OTHER_VERDICTS - sets)  # each still sets one: the list stays true


def test_no_module_is_over_600_lines():
    """[3/5]: rooms a newcomer can read. A module that grows past 600 lines is split where it does two things."""
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert not long, long


LOOP_ENDERS = {"end_job", "end_attempt", "apply_outcome"}


def _calls_in(module: str, node: ast.AST, prefix: str, graph: dict[str, set[str]]) -> None:
    """The functions under ``node`` (``module:prefix.name``) and the names each calls, into ``graph``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            _calls_in(module, child, f"{prefix}{child.name}.", graph)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            calls = graph.setdefault(f"{module}:{prefix}{child.name}", set())
            calls |= {c for n in ast.walk(child) if (c := _called(n)) is not None}
            calls |= {  # the loop's enders named as a value too (a partial, a callback), not only called
                n.id if isinstance(n, ast.Name) else n.attr
                for n in ast.walk(child)
                if (isinstance(n, ast.Name) and n.id in LOOP_ENDERS)
                or (isinstance(n, ast.Attribute) and n.attr in LOOP_ENDERS)
            }
            calls |= {  # a job's end reached through its attempt (``a.job.end(...)``), named apart
                "job.end"
                for n in ast.walk(child)
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr == "end"
                and isinstance(n.func.value, ast.Attribute)
                and n.func.value.attr == "job"
            }
            _calls_in(module, child, f"{prefix}{child.name}.", graph)  # functions inside it: their own nodes


def _call_graph() -> dict[str, set[str]]:
    """Every function and method of hangwatch (``module:Class.name``) -> the names it calls (``f(...)`` and
    ``x.f(...)``, by name: an over-approximation, so a caller is never missed)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        _calls_in(module, ast.parse(path.read_text()), "", graph)
    return graph


def _callers(graph: dict[str, set[str]], name: str) -> set[str]:
    return {f for f, calls in graph.items() if name in calls}


def test_only_the_run_loop_ends_the_job_it_watches():
    """[3/5]: a hang, a signal, the budget, another node's decision and hangwatch's own exit all end the job through
    the loop: a collaborator returns ``EndJob`` (supervise/attempt.py), the loop applies it (``apply_outcome``), and
    its ``end_attempt`` ends the tree (``end_job``) and writes the `action` event. Read from what calls what: the
    attempt's job is ended in ``end_job`` alone, and whatever calls ``end_job``, ``end_attempt`` or
    ``apply_outcome`` is the loop (its module's functions and the Supervisor's methods), never a collaborator."""
    graph = _call_graph()
    loop = "hangwatch.supervise.supervisor:"
    assert _callers(graph, "job.end") == {f"{loop}end_job"}
    enders = {f for f, calls in graph.items() if calls & LOOP_ENDERS}
    assert {f for f in enders if not f.startswith(loop)} == set()
    # it reads what it says: the loop's round, its close and its outcomes end the job
    assert {f"{loop}Supervisor._step", f"{loop}Supervisor._close", f"{loop}apply_outcome"} <= enders


# What is done on a hang: the incident handler's, with the other nodes; the healer's restart where heal cannot help.
ATTEMPT_FIELDS_BY = {"action": ("supervise/stall/act.py", "supervise/stall/healing.py")}


def test_the_attempts_own_fields_are_written_by_the_loop_alone():
    """[3/5]: an Attempt's own fields (its end, exit code, job, scan time...) are written by the run loop; its
    records (steps, suspicion, heal...) each by the collaborator named in supervise/attempt.py; ``action`` by the
    incident handler, which decides it with the other nodes."""
    attempt = ast.parse((SRC / "supervise" / "attempt.py").read_text())
    cls = next(n for n in ast.walk(attempt) if isinstance(n, ast.ClassDef) and n.name == "Attempt")
    fields = {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    records = {"steps", "startup", "suspicion", "node", "resume", "heal", "still", "detector"}
    own = fields - records
    assert {"action", "ended_at", "exit_code", "last_scan"} <= own
    writes = []
    for path in sorted((SRC / "supervise").rglob("*.py")):
        where = str(path.relative_to(SRC))
        if where == "supervise/supervisor.py":
            continue
        for n in ast.walk(ast.parse(path.read_text())):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
            for t in [x for y in targets for x in ([*y.elts] if isinstance(y, ast.Tuple) else [y])]:
                on_attempt = isinstance(t, ast.Attribute) and (  # an attempt by its usual names
                    (isinstance(t.value, ast.Name) and t.value.id in ("a", "attempt"))
                    or (isinstance(t.value, ast.Attribute) and t.value.attr == "attempt")
                )
                if on_attempt and t.attr in own and where not in ATTEMPT_FIELDS_BY.get(t.attr, ()):  # type: ignore[union-attr]
                    writes.append(f"{where}:{n.lineno} writes a.{t.attr}")  # type: ignore[union-attr]
    assert not writes, writes


def test_a_failed_look_is_turned_into_what_the_user_sees_in_one_place():
    """[3/5]: a look carries its capture's error (``Unseen``, stall/look.py) and the capturer's ``look`` is the one
    place in supervise/ that catches a CaptureError and writes it down (its capture thread only hands one over to
    the thread that asked); no judge catches one of its own."""
    catches = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = f"{where}.{child.name}" if isinstance(child, ast.FunctionDef | ast.ClassDef) else where
            caught = ast.unparse(child.type) if isinstance(child, ast.ExceptHandler) and child.type else ""
            if "CaptureError" in caught or "HangwatchError" in caught:
                catches.append(inner)
            visit(child, inner)

    for path in sorted((SRC / "supervise").rglob("*.py")):
        visit(ast.parse(path.read_text()), str(path.relative_to(SRC)))
    assert catches == [
        "supervise/stall/capturing.py.Capturer.bounded.work",
        "supervise/stall/capturing.py.Capturer.look",
    ], catches


def test_every_broad_except_says_what_it_protects():
    """[3/5]: an ``except Exception`` (or broader) says on its line what it protects (a job that must not break, a
    loop that goes on, a cleanup before a re-raise). hangwatch's own log what they caught, or hand it on; the
    in-job hook's write nothing (a look never changes what the job writes)."""
    silent = []
    for path in sorted(SRC.rglob("*.py")):
        lines = path.read_text().splitlines()
        for n in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(n, ast.ExceptHandler):
                continue
            caught = set(re.findall(r"\w+", ast.unparse(n.type))) if n.type is not None else {"BaseException"}
            said = re.sub(
                r"noqa(: [A-Z]+\d+(, [A-Z]+\d+)*)?|type: ignore\[[\w-]+\]", "", lines[n.lineno - 1].partition("#")[2]
            )
            if caught & {"Exception", "BaseException"} and not re.search(r"[a-z]{3,}", said):  # a directive alone
                silent.append(f"{path.relative_to(SRC)}:{n.lineno}")
    assert not silent, silent
