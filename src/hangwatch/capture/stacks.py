"""Python stacks through py-spy: one ``py-spy dump --json`` per PID, all in parallel.

Measured on this kind of machine (docs/facts.md#reading-stacks-with-py-spy): ``--subprocesses`` drops
processes, a blocking attach to a ``D``-state process never returns, and a ``T``-state process
fails a blocking attach. So: one call per PID, started together, each bounded by one shared
deadline, ``--nonblocking`` when any thread is in ``D`` or ``T``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hangwatch.errors import CaptureError
from hangwatch.records.evidence import Frame

DEFAULT_TIMEOUT_S = 8.0


@dataclass(frozen=True)
class RawThread:
    """One thread of a py-spy dump."""

    tid: int  # OS thread id
    name: str | None
    active: bool
    owns_gil: bool
    frames: tuple[Frame, ...]  # innermost first


@dataclass(frozen=True)
class StackResult:
    """One process's py-spy dump: its threads, or why none could be read."""

    threads: tuple[RawThread, ...] | None
    error: str | None  # one line a person can act on when threads is None


def find_py_spy() -> str | None:
    """$HANGWATCH_PY_SPY if set, else py-spy beside this interpreter (a venv's bin/), else on PATH."""
    override = os.environ.get("HANGWATCH_PY_SPY")
    if override is not None:
        return override if os.access(override, os.X_OK) else None
    beside = Path(sys.executable).parent / "py-spy"
    if beside.exists():
        return str(beside)
    return shutil.which("py-spy")


def require_py_spy() -> str:
    """The py-spy binary to use; CaptureError with the fix when there is none."""
    path = find_py_spy()
    if path is None:
        raise CaptureError(
            "py-spy is not installed, so no Python stacks can be read",
            "Install it with `pip install py-spy` in hangwatch's environment",
        )
    return path


def _classify_error(pid: int, stderr: str) -> str:
    text = stderr.strip().splitlines()
    joined = " ".join(text)
    if "Permission" in joined or "os error 1)" in joined or "Operation not permitted" in joined:
        return (
            f"cannot read stacks of pid {pid}: ptrace not permitted; run hangwatch as the job's user "
            "or as root, or grant CAP_SYS_PTRACE"
        )
    if "No such file" in joined or "No such process" in joined or "os error 3" in joined:
        return f"pid {pid} exited while its stack was being read"
    if "Failed to find python version" in joined or "python interpreter" in joined.lower():
        return f"pid {pid} is not a Python process; no Python stack"
    last = next((line for line in text if line.startswith("Error")), text[0] if text else "no output")
    return f"py-spy could not read pid {pid}: {last[:200]}"


def _parse(payload: str) -> tuple[RawThread, ...]:
    data: list[dict[str, Any]] = json.loads(payload)
    threads = []
    for t in data:
        frames = tuple(
            Frame(
                function=str(f.get("name", "?")),
                file=str(f.get("module") or f.get("filename", "?")),
                line=int(f.get("line") or 0),
                native=bool(f.get("module")),
            )
            for f in t.get("frames", [])
        )
        threads.append(
            RawThread(
                tid=int(t.get("os_thread_id") or t.get("thread_id") or 0),
                name=t.get("thread_name"),
                active=bool(t.get("active")),
                owns_gil=bool(t.get("owns_gil")),
                frames=frames,
            )
        )
    return tuple(threads)


def dump_stacks(
    targets: dict[int, bool], py_spy: str, timeout_s: float = DEFAULT_TIMEOUT_S, native: bool = False
) -> dict[int, StackResult]:
    """Dump the stacks of ``targets`` (pid -> nonblocking?) in parallel, within ``timeout_s`` in all;
    ``native`` interleaves C/C++ frames (slower: 100-450 ms a torch process)."""
    procs: dict[int, subprocess.Popen[str]] = {}
    results: dict[int, StackResult] = {}
    for pid, nonblocking in targets.items():
        cmd = [py_spy, "dump", "--json", "--full-filenames", "--pid", str(pid)]
        if nonblocking:
            cmd.append("--nonblocking")
        elif native:
            cmd.append("--native")  # needs the process stopped: never with --nonblocking
        try:
            procs[pid] = subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={"PATH": "/usr/bin:/bin", "RUST_BACKTRACE": "0"},
            )
        except OSError as e:
            results[pid] = StackResult(None, f"cannot run py-spy ({e}); reinstall it with `pip install py-spy`")
    deadline = time.monotonic() + timeout_s
    for pid, p in procs.items():
        try:
            out, err = p.communicate(timeout=max(0.05, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            # py-spy attaches with PTRACE_SEIZE: killing it mid-dump leaves the target running.
            p.kill()
            try:
                p.communicate(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            results[pid] = StackResult(
                None, f"py-spy did not answer for pid {pid} within {timeout_s:.0f} s (process in uninterruptible I/O?)"
            )
            continue
        if p.returncode == 0 and out.strip().startswith("["):
            try:
                results[pid] = StackResult(_parse(out), None)
            except (ValueError, KeyError, TypeError) as e:
                results[pid] = StackResult(None, f"py-spy output for pid {pid} was not understood: {e}")
        else:
            results[pid] = StackResult(None, _classify_error(pid, err))
    return results
