"""Timers that re-arm themselves, read from the user's source at capture time: a function that starts a
``threading.Timer`` of itself (``threading.Timer(1.0, flush).start()`` inside ``flush``), from the main script and the
user's files on the stacks; rules read the result from the evidence, never the file. A Timer thread shows no frame of
the user's except while its callback runs, so this is where the line that starts each next timer is found. Read only
where the interpreter's exit waits and a Timer thread is there."""

from __future__ import annotations

import ast
import linecache
import os
import stat
from dataclasses import replace

from hangwatch import signatures as sg
from hangwatch.capture.locals import command_source, unchanged_since_start
from hangwatch.records.evidence import ProcessInfo, ProcessSample, Rearm
from hangwatch.redact import redact_text

MAX_FILES = 8  # the main script first, then the user's files on the stacks
MAX_FILE_BYTES = 1 << 20
STOPPING_CALLS = frozenset({"exit", "_exit", "quit", "cancel", "abort"})
CONDITIONS = (ast.If, ast.IfExp, ast.While, ast.For, ast.AsyncFor, ast.Try, ast.BoolOp, ast.Match)


def rearming_timers(info: ProcessInfo, samples: tuple[ProcessSample, ...]) -> tuple[Rearm, ...]:
    """The user's functions that start a Timer of themselves, where main is in the exit's join and a thread is a Timer;
    () else."""
    frames = [f for s in samples for t in s.threads for f in t.frames]
    exiting = any(
        sg.at(f, "threading.py", sg.EXIT_JOIN)
        for s in samples
        for t in s.threads
        if t.tid == info.pid
        for f in t.frames
    )
    if (
        not info.is_python
        or not exiting
        or not any(f.function == "Timer.run" and sg.at(f, "threading.py") for f in frames)
    ):
        return ()  # read only where the interpreter's exit waits and a Timer is there: the one use of it
    files = [p for p in (_main_script(info), *(f.file for f in frames if sg.is_user(f))) if p]
    found: list[Rearm] = []
    names: list[str] = []  # every function defined in the files read, by its bare name
    for file in list(dict.fromkeys(files))[:MAX_FILES]:
        found.extend(_rearms_in(file, info.pid, names))
    # a name defined twice (Heartbeat.tick beside Flusher.tick, an override calling super().tick()): which one a
    # timer's ``self.tick`` runs is not read, so each may not re-arm
    return tuple(r if names.count(r.function.rsplit(".", 1)[-1]) == 1 else replace(r, conditional=True) for r in found)


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


def _rearms_in(file: str, pid: int, names: list[str]) -> list[Rearm]:
    """The re-arms ``file`` holds, with each function's qualified name (``Beat.tick``); ``names`` gets the bare name
    of every function it defines."""
    if file == "<string>":
        lines = command_source(pid)
    elif not file.startswith("/") or not unchanged_since_start(file, pid):
        return []  # a file edited since the job started says nothing of the code it runs
    else:
        try:
            st = os.stat(file)
        except OSError:
            return []
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return []  # a FIFO or a device (/dev/stdin) would block the read; a huge file is not a script
        linecache.checkcache(file)
        lines = linecache.getlines(file)
    try:
        tree = ast.parse("".join(lines or ()))
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python we can read: nothing is said of it
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
    return (isinstance(func, ast.Name) and func.id == "Timer") or (
        isinstance(func, ast.Attribute) and func.attr == "Timer"
    )


def _function_arg(call: ast.Call) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == "function"), None)
    return kw if kw is not None else call.args[1] if len(call.args) > 1 else None


def _names(arg: ast.expr | None, name: str) -> bool:
    """``arg`` is ``name`` or ``self.name`` / ``cls.name`` (a method that re-arms itself; ``self.sock.close`` in a
    method ``close`` is another object's)."""
    if isinstance(arg, ast.Attribute):
        return arg.attr == name and isinstance(arg.value, ast.Name) and arg.value.id in ("self", "cls")
    return isinstance(arg, ast.Name) and arg.id == name
