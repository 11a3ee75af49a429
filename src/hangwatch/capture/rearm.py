"""Timers that re-arm themselves, read from the user's source at capture time: a function that starts a
``threading.Timer`` of itself (``threading.Timer(1.0, flush).start()`` inside ``flush``), from the main script and the
user's files on the stacks; rules read the result from the evidence, never the file. A Timer thread shows no frame of
the user's except while its callback runs, so this is where the line that starts each next timer is found. Read only
where a Timer thread is there."""

from __future__ import annotations

import ast
import functools
import linecache
import os
import stat
from dataclasses import replace

from hangwatch import signatures as sg
from hangwatch.capture.locals import command_source, unchanged_since_start
from hangwatch.records.evidence import ExitTimer, Frame, ProcessInfo, ProcessSample, Rearm
from hangwatch.redact import redact_text

MAX_FILES = 8  # the main script first, then the user's files on the stacks
MAX_FILE_BYTES = 1 << 20
STOPPING_CALLS = frozenset({"exit", "_exit", "quit", "cancel", "abort"})
CONDITIONS = (ast.If, ast.IfExp, ast.While, ast.For, ast.AsyncFor, ast.Try, ast.BoolOp, ast.Match)


def _files(info: ProcessInfo, samples: tuple[ProcessSample, ...]) -> tuple[list[Frame], list[str]]:
    """The frames of every sample and the files to read (the main script, then the user's files on the stacks)."""
    if not info.is_python:
        return [], []
    frames = [f for s in samples for t in s.threads for f in t.frames]
    files = [p for p in (_main_script(info), *(f.file for f in frames if sg.is_user(f))) if p]
    return frames, list(dict.fromkeys(files))[:MAX_FILES]


def _exit_files(info: ProcessInfo, samples: tuple[ProcessSample, ...]) -> tuple[list[Frame], list[str]]:
    """``_files``, where the interpreter's exit waits (main in its join); ([], []) else."""
    exiting = any(
        sg.at(f, "threading.py", sg.EXIT_JOIN)
        for s in samples
        for t in s.threads
        if t.tid == info.pid
        for f in t.frames
    )
    return _files(info, samples) if exiting else ([], [])


def rearming_timers(info: ProcessInfo, samples: tuple[ProcessSample, ...]) -> tuple[Rearm, ...]:
    """The user's functions that start a Timer of themselves, where a thread is a Timer; () else."""
    frames, files = _files(info, samples)
    if not any(f.function == "Timer.run" and sg.at(f, "threading.py") for f in frames):
        return ()  # read only where a Timer is there: an exit waiting on timers that re-arm, a holder's Timer
    found: list[Rearm] = []
    names: list[str] = []  # every function defined in the files read, by its bare name
    for file in files:
        tree, lines = _parsed(file, info.pid)
        found.extend(_rearms_in(tree, lines, file, names))
    # a name defined twice (Heartbeat.tick beside Flusher.tick, an override calling super().tick()): which one a
    # timer's ``self.tick`` runs is not read, so each may not re-arm
    return tuple(r if names.count(r.function.rsplit(".", 1)[-1]) == 1 else replace(r, conditional=True) for r in found)


def exit_timers(info: ProcessInfo, samples: tuple[ProcessSample, ...]) -> tuple[ExitTimer, ...]:
    """The timers the user's files arm that end the process when they fire: faulthandler's
    (``dump_traceback_later(N, exit=True)``, read where a thread with no Python stack, its watchdog, is there) and the
    kernel's alarm (``signal.alarm(N)``, ``signal.setitimer(signal.ITIMER_REAL, N)``, which ends the process where no
    handler catches SIGALRM); N where the call writes it as a number."""
    if info.forked_from_parent:
        return ()  # a fork's child inherits no alarm and no faulthandler thread, only its parent's source
    native = any(not t.frames for s in samples for t in s.threads)
    found = []
    for file in _files(info, samples)[1]:
        tree, lines = _parsed(file, info.pid)
        calls = _timer_calls(tree) if tree is not None else ()
        disarms = any(kind == "disarm" for kind, _, _ in calls)  # (an alarm there may be disarmed: none is read)
        for kind, seconds, line in calls:
            if (kind == "alarm" and not disarms) or (kind == "faulthandler" and native):
                code = lines[line - 1].strip() if line <= len(lines) else None
                found.append(ExitTimer(kind, seconds, file, line, redact_text(code) if code else None))
    return tuple(found)


@functools.lru_cache(maxsize=32)
def _timer_calls(tree: ast.Module) -> tuple[tuple[str, float | None, int], ...]:
    """(kind, seconds, line) of each call in ``tree`` that arms a timer ending the process (a file's tree is kept while
    it is unchanged: each look, and each worker running the same files, walks it once)."""
    calls = (n for n in ast.walk(tree) if isinstance(n, ast.Call))
    return tuple((*timer, call.lineno) for call in calls if (timer := _exit_timer(call)) is not None)


def _exit_timer(call: ast.Call) -> tuple[str, float | None] | None:
    """(kind, seconds) of a call that arms a timer ending the process, or that says an alarm in its file may not end
    it (``disarm``: ``alarm(0)``; a SIGALRM handler set, ``signal.signal(signal.SIGALRM, ...)``: where the process has
    none now, that code did not run, nor, most likely, its alarm), or None."""
    name, args = _called(call.func), call.args
    if name == "signal" and args and _called(args[0]) == "SIGALRM":
        return ("disarm", None)
    if name == "dump_traceback_later":
        exits = any(
            k.arg == "exit" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
        )
        first = args[0] if args else next((k.value for k in call.keywords if k.arg == "timeout"), None)
        return ("faulthandler", _seconds(first)) if exits else None
    if name == "setitimer" and len(args) > 1 and _called(args[0]) == "ITIMER_REAL":
        at = args[1]
    elif name == "alarm" and _of_signal(call.func) and args:
        at = args[0]
    else:
        return None
    seconds = _seconds(at)
    return ("disarm", None) if seconds == 0 else ("alarm", seconds)


def _seconds(node: ast.expr | None) -> float | None:
    """A number the code writes as such, or None."""
    value = node.value if isinstance(node, ast.Constant) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return float(value) if abs(value) < 1e15 else None  # (a number past any bound: as if not read)


def _of_signal(func: ast.expr) -> bool:
    """``signal.alarm``, not any object's ``alarm``."""
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "signal"


def _called(func: ast.expr) -> str | None:
    """The bare name a call calls: ``f`` of ``f(...)`` or ``mod.f(...)``."""
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _main_script(info: ProcessInfo) -> str | None:
    """The script ``python [OPTIONS] SCRIPT`` runs, absolute (``<string>`` for ``-c``); None for ``-m`` or none.
    Options as the interpreter reads them: a cluster (``-uX dev``) ends at ``c``, ``m``, ``W`` or ``X``, whose value
    is the rest of the cluster or else the next argument. A relative script is joined to the process's current
    directory, which a job that changed it no longer shares (then the file is not found, or says nothing)."""
    args = iter(info.cmdline[1:])
    for a in args:
        if a == "--check-hash-based-pycs":
            next(args, None)
            continue
        if a.startswith("--") or a == "-":
            return None  # --version, --help; or the program read from standard input
        if not a.startswith("-"):
            try:
                return a if os.path.isabs(a) else os.path.join(os.readlink(f"/proc/{info.pid}/cwd"), a)
            except OSError:
                return None
        for i, c in enumerate(a[1:], 1):
            if c in "cmWX":
                if i == len(a) - 1:
                    next(args, None)  # the value is the next argument
                if c in "cm":
                    return "<string>" if c == "c" else None
                break
    return None


def daemon_threads(info: ProcessInfo, samples: tuple[ProcessSample, ...]) -> tuple[str, ...]:
    """The names of the threads the files read start as daemons, where main is in the exit's join beside two threads
    or more (which one the exit waits for is then in question): a ``Thread(..., daemon=True)`` (or one whose variable
    is set ``.daemon = True`` in the same function), named by its ``name=`` string, else ``(target)@file`` for a
    target the same file defines, as Python names it (``Thread-3 (serve)``) with the file its frame runs in (a function
    of that name elsewhere, started from a file not read, is another thread). A target started both ways anywhere in
    the files is in neither."""
    _, files = _exit_files(info, samples)
    others = {t.tid for s in samples for t in s.threads if t.tid != info.pid and t.frames}
    if len(others) < 2:
        return ()
    starts: dict[str, set[bool]] = {}
    for file in files:
        tree, _ = _parsed(file, info.pid)
        for key, daemon in _thread_starts(tree, file) if tree is not None else ():
            starts.setdefault(key, set()).add(daemon)
    return tuple(sorted(k for k, ways in starts.items() if ways == {True}))


def _thread_starts(tree: ast.AST, file: str) -> list[tuple[str, bool]]:
    """Each ``Thread(...)`` call with a target this file defines (``fn``, ``self.fn``) or a name: (its name, or
    ``(target)@file``; whether it is a daemon)."""
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out = []
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nodes = _own_nodes(scope)
        made, unmade = _made_daemons([scope, *nodes])
        for n in nodes:
            if not isinstance(n, ast.Call) or not _named(n.func, "Thread"):
                continue
            kw = {k.arg: k.value for k in n.keywords}
            target = kw.get("target", n.args[1] if len(n.args) > 1 else None)
            fn = target.id if isinstance(target, ast.Name) else ""
            if isinstance(target, ast.Attribute) and _dotted(target.value) in ("self", "cls"):
                fn = target.attr  # a method of a class of this file (another object's: not known where)
            name = kw.get("name", n.args[2] if len(n.args) > 2 else None)
            if name is not None and not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                continue  # a name made at run time: which thread it is cannot be told
            key = str(name.value) if isinstance(name, ast.Constant) else f"({fn})@{file}" if fn in defined else ""
            if key:
                flag = kw.get("daemon")
                literal = isinstance(flag, ast.Constant) and flag.value is True
                out.append((key, (literal or id(n) in made) and id(n) not in unmade))
    return out


def _made_daemons(nodes: list[ast.AST]) -> tuple[set[int], set[int]]:
    """The ``Thread(...)`` calls assigned to a variable (``t = Thread(...)``) that a later statement of the same block
    makes a daemon (``t.daemon = True``, ``t.setDaemon(True)``) before the variable takes another value or the thread
    starts (then the set raises); and those whose variable is set anything else anywhere in the scope (``t.daemon =
    False``, under a condition or not). One set under a condition, or on the variable's other thread, says nothing."""
    made: set[int] = set()
    unmade: set[int] = set()
    flags = [f for n in nodes if (f := _daemon_flag(n.value if isinstance(n, ast.Expr) else n))[0]]
    for block in (
        b for n in nodes for f in ("body", "orelse", "finalbody") if isinstance(b := getattr(n, f, None), list)
    ):
        for i, st in enumerate(block):
            if not (isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and _named(st.value.func, "Thread")):
                continue
            var = _dotted(st.targets[0]) if len(st.targets) == 1 else ""
            if any(v == var and not on for v, on in flags):
                unmade.add(id(st.value))
            for later in block[i + 1 :] if var else ():
                on_var, on = _daemon_flag(later.value if isinstance(later, ast.Expr) else later)
                if on_var == var:
                    (made if on else unmade).add(id(st.value))
                    break
                started = isinstance(later, ast.Expr) and isinstance(later.value, ast.Call)
                if started and _dotted(later.value.func) == f"{var}.start":
                    break  # started: a later set raises, and the thread keeps what it had
                if isinstance(later, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and var in map(
                    _dotted, later.targets if isinstance(later, ast.Assign) else [later.target]
                ):
                    break  # the variable takes another value: what follows is not this thread's
    return made, unmade


def _own_nodes(scope: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of ``scope``'s own body, not of a function or class defined in it (a ``t.daemon = True`` there is
    another ``t``'s)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(scope.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        out.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return out


def _dotted(node: ast.expr) -> str:
    """``t`` or ``self.t``, else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return ""


def _daemon_flag(n: ast.AST) -> tuple[str, bool]:
    """(the variable ``n`` sets the daemon flag of, whether to a literal True): ``t.daemon = ...``,
    ``t.setDaemon(...)``; ('', False) else."""
    if isinstance(n, ast.Assign) and isinstance(t := n.targets[0], ast.Attribute) and t.attr == "daemon":
        return _dotted(t.value), isinstance(n.value, ast.Constant) and n.value.value is True
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "setDaemon" and n.args:
        on = n.args[0]
        return _dotted(n.func.value), isinstance(on, ast.Constant) and on.value is True
    return "", False


def _parsed(file: str, pid: int) -> tuple[ast.Module | None, list[str]]:
    """``file``'s syntax tree and lines, where it is the code the process runs; (None, []) else."""
    if file == "<string>":
        lines = command_source(pid) or []
    elif not file.startswith("/") or not unchanged_since_start(file, pid):
        return None, []  # a file edited since the job started says nothing of the code it runs
    else:
        try:
            st = os.stat(file)
        except OSError:
            return None, []
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return None, []  # a FIFO or a device (/dev/stdin) would block the read; a huge file is not a script
        tree, kept = _parsed_file(file, st.st_mtime_ns, st.st_size)  # (each look reads the same files again)
        return tree, list(kept)
    return _parse(lines)


def _parse(lines: list[str]) -> tuple[ast.Module | None, list[str]]:
    try:
        return ast.parse("".join(lines)), lines
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python we can read: nothing is said of it
        return None, []


@functools.lru_cache(maxsize=32)
def _parsed_file(file: str, mtime_ns: int, size: int) -> tuple[ast.Module | None, tuple[str, ...]]:
    """``file``'s tree and lines as of that modification time and size (the key: a file written since is read anew)."""
    linecache.checkcache(file)
    tree, lines = _parse(linecache.getlines(file))
    return tree, tuple(lines)


def _rearms_in(tree: ast.Module | None, lines: list[str], file: str, names: list[str]) -> list[Rearm]:
    """The re-arms ``file`` holds, with each function's qualified name (``Beat.tick``); ``names`` gets the bare name
    of every function it defines."""
    if tree is None:
        return []
    out = []
    scopes: list[tuple[ast.AST, str]] = [(tree, "")]
    while scopes:
        node, prefix = scopes.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scopes.append((child, f"{prefix}{child.name}."))
            if not isinstance(child, ast.FunctionDef):
                if isinstance(child, ast.AsyncFunctionDef):
                    names.append(child.name)
                continue
            names.append(child.name)
            for call, conditional in _own_timers(child):
                code = lines[call.lineno - 1].strip() if lines and call.lineno <= len(lines) else None
                out.append(
                    Rearm(prefix + child.name, file, call.lineno, redact_text(code) if code else None, conditional)
                )
    return out


def _own_timers(fn: ast.FunctionDef) -> list[tuple[ast.Call, bool]]:
    """The ``Timer(interval, fn, ...)`` calls in ``fn``'s own body (not in a function nested in it), each with
    whether it may not run: a condition, a loop or a ``try`` stands between ``fn`` and the call, or the function has
    a way to stop the chain anywhere (``if stop.is_set(): return`` above the call; a raise, an assert, an exit, a
    timer's ``cancel()``). A callee that raises is not read."""
    found, leaves = [], False
    stack: list[tuple[ast.AST, bool]] = [(s, False) for s in fn.body]
    while stack:
        node, under = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        leaves = leaves or isinstance(node, (ast.Return, ast.Raise, ast.Assert)) or _stops(node)
        if isinstance(node, ast.Call) and _is_timer(node.func) and _names(_function_arg(node), fn.name):
            found.append((node, under))
        inner = under or isinstance(node, CONDITIONS)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return sorted(((call, under or leaves) for call, under in found), key=lambda x: x[0].lineno)


def _stops(node: ast.AST) -> bool:
    """A call that ends the chain from inside its callback: ``sys.exit()``, ``os._exit()``, ``quit()``, a timer's
    ``cancel()``, an ``abort()``."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name in STOPPING_CALLS


def _is_timer(func: ast.expr) -> bool:
    return _named(func, "Timer")


def _named(func: ast.expr, name: str) -> bool:
    """``name`` or ``module.name``."""
    return (isinstance(func, ast.Name) and func.id == name) or (isinstance(func, ast.Attribute) and func.attr == name)


def _function_arg(call: ast.Call) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == "function"), None)
    return kw if kw is not None else call.args[1] if len(call.args) > 1 else None


def _names(arg: ast.expr | None, name: str) -> bool:
    """``arg`` is ``name`` or ``self.name`` / ``cls.name`` (a method that re-arms itself; ``self.sock.close`` in a
    method ``close`` is another object's)."""
    if isinstance(arg, ast.Attribute):
        return arg.attr == name and isinstance(arg.value, ast.Name) and arg.value.id in ("self", "cls")
    return isinstance(arg, ast.Name) and arg.id == name
