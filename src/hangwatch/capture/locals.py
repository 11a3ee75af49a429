"""The second pass for threads that spin: read the locals of their innermost user frame twice, a
moment apart, so that diagnosis can tell a loop that advances (a counter grows) from one that spins
in place (its condition never changes). Only for those threads, and bounded in time."""

from __future__ import annotations

import json
import linecache
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

import psutil

from hangwatch import signatures as sg
from hangwatch.capture import flags, proc
from hangwatch.capture.stacks import PY_SPY_ENV, dump_command, why_not_stop
from hangwatch.records.evidence import Frame, LocalsRead, ProcessInfo, ProcessSample, Role, ThreadSample
from hangwatch.redact import redact_text

BUSY_SHARE = 0.3  # of one core over the window: the same threshold diagnosis calls "spinning"
IDLE_SHARE = 0.05  # below this a thread is idle, even when the kernel shows it runnable
READS = 2
GAP_S = 0.5
LINE_READS, LINE_GAP_S = 8, 0.05  # threads at a module's top level: lines, not locals (a 4-line loop: 4 x 0.25^8)
TIMEOUT_S = 3.0  # per read, all processes together
MAX_LOCALS = 12
MAX_REPR = 80
LOOP_SCAN_LINES = 40  # how far up the source to look for the enclosing loop header
LOOP_BODY_LINES = 30  # how much of the loop's body is kept, for telling a counter from a walk over data
LOOP_START = re.compile(r"^(\s*)(?:while|for)\b")
HEADER_LINES = 5  # how many lines a loop's header may span (brackets, a backslash), up to its colon
START_SLACK_S = 1.0  # a process's start time is read in clock ticks: a file written just before it may look later
DEF_HEADER = re.compile(r"^\s*(async\s+def|def|class)\b")


def at_top_level(series: dict[int, list[ProcessSample]], targets: dict[int, set[int]]) -> dict[int, set[int]]:
    """The targets whose innermost user frame is a module's top level (``<module>``): py-spy reads no locals there."""
    out: dict[int, set[int]] = {}
    for pid, tids in targets.items():
        last = series[pid][-1] if series.get(pid) else None
        for t in last.threads if last is not None else ():
            user = next((f for f in sg.own_frames(t.frames) if sg.is_user(f)), None)
            if t.tid in tids and user is not None and user.function == "<module>":
                out.setdefault(pid, set()).add(t.tid)
    return out


def spinning_threads(series: dict[int, list[ProcessSample]], clock_ticks: int) -> dict[int, set[int]]:
    """pid -> tids that burned CPU in the same innermost user function in every sample with a stack."""
    out: dict[int, set[int]] = {}
    for pid, samples in series.items():
        if len(samples) < 2:
            continue
        seconds = samples[-1].at - samples[0].at
        if seconds <= 0:
            continue
        first = {t.tid: t for t in samples[0].threads}
        for t in samples[-1].threads:
            t0 = first.get(t.tid)
            if t0 is None or t0.cpu_ticks is None or t.cpu_ticks is None:
                continue
            used = (t.cpu_ticks - t0.cpu_ticks) / clock_ticks
            runnable = all(th.state == "R" for s in samples for th in s.threads if th.tid == t.tid)
            if used < BUSY_SHARE * seconds and not (runnable and used > IDLE_SHARE * seconds):
                continue  # neither busy nor runnable throughout (a spin starved by a crowded machine)
            inner = set()
            for s in samples:
                th = next((x for x in s.threads if x.tid == t.tid), None)
                if th is None or not th.frames:
                    continue
                user = next((f for f in sg.own_frames(th.frames) if sg.is_user(f)), None)
                inner.add((user.file, user.function) if user else None)
            if len(inner) == 1 and None not in inner:
                out.setdefault(pid, set()).add(t.tid)
    return out


def _header(text: str) -> str | None:
    """A loop's header as Python reads it, up to its colon outside brackets and strings, its comments left out, on
    one line (``while (a  # why`` then ``and b):`` -> ``while (a and b)``); None where no colon ends it, or a
    bracket closes that it did not open (a comprehension's ``for`` line, not a loop's)."""
    out, depth, quote, i = [], 0, "", 0
    while i < len(text):
        c = text[i]
        if quote:
            out.append(text[i : i + 1 + (c == "\\")])
            i += c == "\\"  # (an escaped quote: `"\""`)
            quote = "" if c == quote else quote
        elif c == "#":  # (a comment, to the line's end)
            nl = text.find("\n", i)
            i = len(text) if nl < 0 else nl
            continue
        elif c == ":" and depth == 0:
            return " ".join("".join(out).replace("\\\n", " ").split())
        else:
            quote = c if c in "'\"" else ""
            depth += (c in "([{") - (c in ")]}")
            if depth < 0:
                return None
            out.append(c)
        i += 1
    return None


def _header_at(getline: Callable[[str, int], str], file: str, n: int) -> tuple[str, list[str]] | None:
    """The header of the loop that starts at line ``n`` (``_header``), and its lines as written: one, or a few where
    brackets or a backslash carry it on (``while (p.poll() is None`` then ``and waited < 12.0):``); None where no
    colon ends it within HEADER_LINES lines, or a ``for`` has no ``in``."""
    lines: list[str] = []
    for k in range(n, n + HEADER_LINES):
        lines.append(getline(file, k))
        header = _header("".join(lines))
        if header is not None:
            return (header, lines) if header.startswith("while") or re.search(r"\bin\b", header) else None
        if not lines[-1]:
            return None
    return None


def command_source(pid: int) -> list[str] | None:
    """The lines of the code a ``python -c CODE`` process runs (its frames' file is ``<string>``), from its
    command line; None for any other process."""
    argv = proc.read_cmdline(pid)
    for i, a in enumerate(argv[1:-1], 1):
        if a == "-c" or (a.startswith("-") and not a.startswith("--") and a.endswith("c")):
            return [ln + "\n" for ln in argv[i + 1].split("\n")]
        if not a.startswith("-"):
            return None  # a script or a module: its arguments are not Python flags
    return None


class Loop(NamedTuple):
    """The loop enclosing a thread's line, as its file has it."""

    header: str  # up to the colon
    body: str | None  # header and body, dedented (None: longer than read)
    line: int  # the header's
    flag: str | None  # what its test reads, where the file says (capture/flags.py)
    private: tuple[str, ...] | None = None  # what its test reads that only its own frame can rebind (flags.py)


def _loop_at(file: str, line: int, pid: int | None = None, function: str | None = None) -> Loop | None:
    """The nearest enclosing ``while``/``for`` loop at or above ``line``: its header (up to the colon),
    its whole source, header and body, dedented (at most LOOP_BODY_LINES lines), the header's line, and the kind
    of the flag its test reads where the file binds it (``flags.flag_kind``). Code run with ``python -c`` (file
    ``<string>``) is read from process ``pid``'s command line."""
    getline: Callable[[str, int], str] = linecache.getline
    command: list[str] | None = None
    if file == "<string>" and pid is not None:
        command = code = command_source(pid)
        if code is None:
            return None

        def from_command(_file: str, n: int) -> str:  # the -c code's lines, 1-based, "" past the end
            return code[n - 1] if 0 < n <= len(code) else ""

        getline = from_command
    elif not file.startswith("/"):
        return None
    else:
        linecache.checkcache(file)  # the file as it is now (a long `hangwatch run` may have read an older one)
    here = getline(file, line)
    indent = len(here) - len(here.lstrip())
    for n in range(line, max(0, line - LOOP_SCAN_LINES), -1):
        text = getline(file, n)
        if n < line and DEF_HEADER.match(text) and len(text) - len(text.lstrip()) < indent:
            return None  # the function or class the line is in starts here: no loop of it encloses the line
        m = LOOP_START.match(text)
        head = _header_at(getline, file, n) if m and (n == line or len(m.group(1)) < indent) else None
        if m and head is not None:
            own = len(m.group(1))
            lines = [h[own:].rstrip() if len(h) - len(h.lstrip()) >= own else h.strip() for h in head[1]]
            for k in range(n + len(head[1]), n + len(head[1]) + LOOP_BODY_LINES):
                nxt = getline(file, k)
                if not nxt:
                    break
                stripped = nxt.strip()
                if stripped and not stripped.startswith("#") and len(nxt) - len(nxt.lstrip()) <= own:
                    break
                lines.append(nxt[own:].rstrip() if len(nxt) > own else "")
            else:
                return Loop(head[0], None, n, None)  # longer than we read: its body is not judged
            if line >= n + len(lines):
                continue  # a loop that ended above the line (a sibling, not its enclosing one)
            header = head[0]
            whole = "".join(command if command is not None else linecache.getlines(file))
            same = unchanged_since_start(file, pid)
            written = flags.flag_kind(whole, header, n) if same else None
            private = flags.private_names(whole, header, n, function) if same else None
            return Loop(header, redact_text("\n".join(lines)), n, written, private)
    return None


def unchanged_since_start(file: str, pid: int | None) -> bool:
    """The file on disk is the one process ``pid`` runs: not written since it started (``python -c`` code is its
    command line's). A file edited while the job runs says nothing of the code running."""
    if file == "<string>":
        return True
    try:
        return pid is not None and os.stat(file).st_mtime <= psutil.Process(pid).create_time() + START_SLACK_S
    except (OSError, psutil.Error):
        return False


def _short(value: str, most: int = MAX_REPR) -> str:
    value = redact_text(value)
    return value if len(value) <= most else value[: most - 3] + "..."


# A DataLoader worker's own loop: which batch it holds (``idx``), its sample indices (``index``: py-spy shows a list's
# first items, about 128 characters, then "..."), its number, its dataset and the dataset's kind (0: map-style, 1:
# iterable). Read beside the dataset's frame, so that a look names the batch with no record kept by the job
# (capture/loader.py: ``task_from_locals``).
WORKER_LOOP_LOCALS = frozenset({"idx", "index", "worker_id", "dataset", "dataset_kind"})
WORKER_LOOP_REPR = 200  # more than py-spy gives: its own cut (", ...]") is the one kept


def _worker_loop_at(frames: list[dict[str, Any]]) -> int | None:
    """Where torch's ``_worker_loop`` frame is in a DataLoader worker's main thread's frames (py-spy's JSON)."""
    return next(
        (
            i
            for i, f in enumerate(frames)
            if f.get("name") == "_worker_loop" and str(f.get("filename", "")).endswith(sg.WORKER_PY)
        ),
        None,
    )


def _worker_loop_read(r: LocalsRead) -> bool:
    """A read of torch's own ``_worker_loop`` (the batch a worker holds), not of the user's code."""
    return r.function == "_worker_loop" and r.file.endswith(sg.WORKER_PY)


FramePick = Callable[[list[dict[str, Any]]], "dict[str, Any] | None"]  # a thread's frames (py-spy's JSON) -> one


def _own_frame(frames: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The innermost frame of the user's code, above a fork's launch (below it, a forked child's stack is a copy of
    its parent's)."""
    for f in frames:
        if f.get("name") == "_launch" and str(f.get("filename", "")).endswith(sg.FORK_LAUNCH[0]):
            return None
        if not sg.is_library_file(str(f.get("filename", ""))):
            return f
    return None


def _read_once(
    targets: dict[int, set[int]], py_spy: str, pick: FramePick = _own_frame, worker_loop: bool = False
) -> tuple[list[LocalsRead], list[str]]:
    procs = {}
    refused = why_not_stop(list(targets))  # one write watch for all of them
    for pid in targets:
        command = dump_command(py_spy, pid, with_locals=True, refused=refused)
        if command is not None:  # never None without native: a process that must not stop is read without a stop
            procs[pid] = subprocess.Popen(
                command[0], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=PY_SPY_ENV
            )
    reads: list[LocalsRead] = []
    notes: list[str] = []
    deadline = time.monotonic() + TIMEOUT_S
    for pid, p in procs.items():
        try:
            out, _ = p.communicate(timeout=max(0.05, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()  # py-spy attaches with PTRACE_SEIZE: killing it mid-dump leaves the target running
            try:
                p.communicate(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            notes.append(f"the locals of pid {pid} could not be read within {TIMEOUT_S:.0f} s")
            continue
        try:
            data: list[dict[str, Any]] = json.loads(out) if p.returncode == 0 else []
        except ValueError:
            data = []
        reads.extend(_reads_of(pid, data, targets[pid], pick, time.time(), worker_loop))
    return reads, notes


def _reads_of(
    pid: int, data: list[dict[str, Any]], tids: set[int], pick: FramePick, now: float, worker_loop: bool = False
) -> list[LocalsRead]:
    """The locals of the threads ``tids`` in one process's py-spy dump (``data``), each of the frame ``pick``
    chooses, with the loop around its line where the frame is the thread's own; with ``worker_loop``, also those of
    a DataLoader worker's own loop, where the thread is in one (the batch it holds)."""
    reads = []
    for t in data:
        tid = int(t.get("os_thread_id") or 0)
        if tid not in tids:
            continue
        frames = list(t.get("frames", []))
        at = _worker_loop_at(frames) if worker_loop else None
        loop_frame = frames[at] if at is not None else None
        if loop_frame is not None:
            frames = frames[:at]  # the worker's own frames: below are the parent's, copied by the fork
            reads.append(
                LocalsRead(
                    at=now,
                    tid=tid,
                    function="_worker_loop",
                    file=str(loop_frame.get("filename")),
                    line=int(loop_frame.get("line") or 0),
                    values=tuple(
                        (str(v.get("name")), _short(str(v.get("repr", "?")), WORKER_LOOP_REPR))
                        for v in (loop_frame.get("locals") or [])
                        if v.get("name") in WORKER_LOOP_LOCALS
                    ),
                )
            )
        frame = pick(frames)
        if frame is None:
            continue
        values = tuple(
            (str(v.get("name")), _short(str(v.get("repr", "?")))) for v in (frame.get("locals") or [])[:MAX_LOCALS]
        )
        file, line = str(frame.get("filename")), int(frame.get("line") or 0)
        loop = _loop_at(file, line, pid, str(frame.get("name") or "")) if pick is _own_frame else None
        reads.append(
            LocalsRead(
                at=now,
                tid=tid,
                function=str(frame.get("name")),
                file=file,
                line=line,
                values=values,
                loop=loop.header if loop else None,
                body=loop.body if loop else None,
                loop_line=loop.line if loop else None,
                flag=loop.flag if loop else None,
                private=loop.private if loop else None,
            )
        )
    return reads


MAX_DATASET_READS = 4  # workers whose dataset locals are read in one capture


def _above_loop(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """The frames a DataLoader worker's own loop runs (innermost first), those above torch's ``_worker_loop``: a
    forked worker's stack also holds the parent's frames below it, its training loop among them; () where there is
    no such loop."""
    at = next((i for i, f in enumerate(frames) if sg.at(f, sg.WORKER_PY, sg.WORKER_LOOP)), None)
    return frames[:at] if at is not None else ()


def holding_a_batch(series: dict[int, list[ProcessSample]], workers: set[int]) -> dict[int, set[int]]:
    """pid -> main thread, for each DataLoader worker in ``workers`` whose main thread sat in a batch in every
    sample with a stack: in user code (its dataset, its transforms: its locals say which sample it is on, a path, a
    key, a URL) or in torch's fetch or collate; its own loop's locals say which batch. The first
    ``MAX_DATASET_READS``."""
    out: dict[int, set[int]] = {}
    for pid in sorted(workers):
        samples = series.get(pid, [])
        stacks = [th.frames for s in samples for th in s.threads if th.tid == pid and th.frames]
        if len(stacks) >= 2 and all(
            any(sg.is_user(f) or sg.at(f, sg.FETCH_PY) or sg.at(f, sg.COLLATE_PY) for f in _above_loop(st))
            for st in stacks
        ):
            out[pid] = {pid}
        if len(out) == MAX_DATASET_READS:
            break
    return out


def read_locals_once(
    targets: dict[int, set[int]], py_spy: str, pick: FramePick = _own_frame, worker_loop: bool = False
) -> tuple[dict[int, tuple[LocalsRead, ...]], list[str]]:
    """One read of the targets' locals (of each thread's innermost frame of the user's, or the frame ``pick``
    chooses from its stack; with ``worker_loop``, of a DataLoader worker's own loop too): pid -> reads, and notes
    on failures."""
    reads, notes = _read_once(targets, py_spy, pick, worker_loop)
    tid_pid = {tid: pid for pid, tids in targets.items() for tid in tids}
    by_pid: dict[int, list[LocalsRead]] = {}
    for r in reads:
        by_pid.setdefault(tid_pid[r.tid], []).append(r)
    return {pid: tuple(rs) for pid, rs in by_pid.items()}, sorted(set(notes))


def read_locals(
    targets: dict[int, set[int]], py_spy: str, reads: int = READS, gap_s: float = GAP_S, worker_loop: bool = False
) -> tuple[dict[int, tuple[LocalsRead, ...]], list[str]]:
    """``reads`` reads of the targets' locals, ``gap_s`` apart: pid -> reads, and notes on failures. Each read
    also says the line its thread was on: for code with no locals to read (a module's top level), a burst of
    them (``LINE_READS``) tells a loop whose stack moves from a spin on one line better than the few samples do."""
    by_pid: dict[int, list[LocalsRead]] = {}
    notes: list[str] = []
    tid_pid = {tid: pid for pid, tids in targets.items() for tid in tids}
    for i in range(reads):
        if i:
            time.sleep(gap_s)
        got, failed = _read_once(targets, py_spy, worker_loop=worker_loop)
        notes.extend(failed)
        for r in got:
            by_pid.setdefault(tid_pid[r.tid], []).append(r)
    return {pid: tuple(rs) for pid, rs in by_pid.items()}, sorted(set(notes))


def _batches_apart(
    reads: dict[int, tuple[LocalsRead, ...]], batches: dict[int, LocalsRead]
) -> dict[int, tuple[LocalsRead, ...]]:
    """``reads`` without those of a DataLoader worker's own loop, which go to ``batches`` (pid -> the last)."""
    out = {}
    for pid, rs in reads.items():
        batches.update((pid, r) for r in rs if _worker_loop_read(r) and any(n == "idx" for n, _ in r.values))
        own = tuple(r for r in rs if not _worker_loop_read(r))
        if own:
            out[pid] = own
    return out


def _own_code(f: Frame) -> bool:
    """The user's code: a file of theirs, or the top level of a ``python -c`` command (``<string>``, read from the
    command line; a dataclass's generated method is ``<string>`` too, but never ``<module>``)."""
    return sg.is_user(f) or (f.file == "<string>" and f.function == "<module>")


def _naps(samples: list[ProcessSample], t: ThreadSample, clock_ticks: int) -> bool:
    """Thread ``t`` switched in and out between the samples (the kernel counts it: a loop, not one long sleep)
    while it used under 5 % of a core: it sleeps and wakes, and does not work (a thread that works is switched out
    too, on a busy machine, and is caught idle only at its blocking calls)."""
    first = next((x for x in samples[0].threads if x.tid == t.tid), None)
    span = samples[-1].at - samples[0].at
    if first is None or span <= 0 or (t.ctx_switches or 0) < 2:  # (the sampler counts them from the first sample)
        return False
    return (t.cpu_ticks or 0) - (first.cpu_ticks or 0) <= 0.05 * span * clock_ticks


def sleeping_loops(series: dict[int, list[ProcessSample]], clock_ticks: int = 100) -> dict[int, tuple[LocalsRead, ...]]:
    """pid -> the enclosing loop of each thread idle in the same user line in every sample that caught it idle
    (a loop around a sleep or a poll), and in the same function in the others (a sample can catch it awake
    between two sleeps, on a busy machine more often: caught idle once is enough where the kernel saw it wake and
    sleep again between samples at under 5 % of a core, ``_naps``; twice where not), read from the source: no
    locals (the thread is not read again), only the loop's header and body, so that diagnosis can tell a loop with
    no way out (``while True: time.sleep(1)``)."""
    out: dict[int, list[LocalsRead]] = {}
    for pid, samples in series.items():
        if len(samples) < 2:
            continue
        for t in samples[-1].threads:
            places, functions, read, idle = set(), set(), 0, 0
            for s in samples:
                th = next((x for x in s.threads if x.tid == t.tid), None)
                if th is not None and not th.frames:
                    continue  # its stack was not read in this sample (under load): it says nothing
                user = next((f for f in th.frames if _own_code(f)), None) if th is not None else None
                if th is None or user is None:
                    break
                read += 1
                functions.add((user.file, user.function))
                if th.active is False:
                    places.add((user.file, user.function, user.line))
                    idle += 1  # (in a sample whose stack was read)
            else:
                naps = _naps(samples, t, clock_ticks)
                if read < 2 or len(places) != 1 or len(functions) != 1 or idle < (1 if naps else 2):
                    continue
                file, function, line = places.pop()
                loop = _loop_at(file, line, pid, function)
                if loop is not None:
                    out.setdefault(pid, []).append(
                        LocalsRead(
                            at=samples[-1].at,
                            tid=t.tid,
                            function=function,
                            file=file,
                            line=line,
                            values=(),
                            loop=loop.header,
                            body=loop.body,
                            loop_line=loop.line,
                            flag=loop.flag,
                            private=loop.private,
                        )
                    )
    return {pid: tuple(rs) for pid, rs in out.items()}


def locals_pass(
    series: dict[int, list[ProcessSample]],
    infos: dict[int, ProcessInfo],
    gone: set[int],
    py_spy: str | None,
    clock_ticks: int,
    notes: list[str],
) -> tuple[dict[int, tuple[LocalsRead, ...]], dict[int, LocalsRead]]:
    """The locals read where they tell work from a hang: threads that spun (their loops' counters; at the top level,
    the line they are on, a few times), DataLoader workers in a batch (in their dataset's code, the sample), and the
    sleep loops' own state; and apart, pid -> the locals of each such worker's own loop (the batch it holds)."""
    local_reads: dict[int, tuple[LocalsRead, ...]] = {}
    batches: dict[int, LocalsRead] = {}
    spinning = spinning_threads(series, clock_ticks) if py_spy else {}
    if py_spy and spinning:
        top = at_top_level(series, spinning)
        rest = {p: tids - top.get(p, set()) for p, tids in spinning.items() if tids - top.get(p, set())}
        local_reads, local_notes = read_locals(rest, py_spy, worker_loop=True) if rest else ({}, [])
        local_reads = _batches_apart(local_reads, batches)
        notes.extend(local_notes)
        if top:
            line_reads, local_notes = read_locals(top, py_spy, LINE_READS, LINE_GAP_S)
            for pid, rs in line_reads.items():
                local_reads[pid] = (*local_reads.get(pid, ()), *rs)
            notes.extend(local_notes)
    # DataLoader workers, but those whose main thread spins (read above, their loop's locals with it)
    workers = {
        p
        for p in series
        if p not in gone and infos[p].role == Role.DATALOADER_WORKER and p not in spinning.get(p, set())
    }
    dataset = holding_a_batch(series, workers) if py_spy and workers else {}
    if py_spy and dataset:
        reads, local_notes = read_locals_once(dataset, py_spy, worker_loop=True)
        local_reads.update(_batches_apart(reads, batches))
        notes.extend(local_notes)
    for pid, loops in _counted(
        sleeping_loops({p: ss for p, ss in series.items() if p not in gone}, clock_ticks), py_spy, notes
    ).items():
        local_reads[pid] = (*local_reads.get(pid, ()), *loops)
    return local_reads, batches


# A loop over a range whose bounds are read from locals (``for _ in range(turns):``), or one whose body steps a counter
# (``tries += 1``, ``left = left - 1``, ``tries = 1 + tries``)
COUNTED = re.compile(
    r"^for\s.+\sin\s+range\(.*[A-Za-z_].*\):|\b(\w+)\s*[-+]=\s*\d|\b(\w+)\s*=\s*\2\s*[-+]\s*\d|\b(\w+)\s*=\s*\d[\d.]*\s*\+\s*\3\b",
    re.M,
)


def _counted(
    loops: dict[int, tuple[LocalsRead, ...]], py_spy: str | None, notes: list[str]
) -> dict[int, tuple[LocalsRead, ...]]:
    """The sleep loops, with their locals read once where the loop counts through a range of a local's (``for _ in
    range(turns)``) or steps a counter (``tries += 1``): how many turns it has left, diagnose/deadline.py; the others
    as they are, source alone."""
    counts = {id(r) for rs in loops.values() for r in rs if COUNTED.search(r.body or f"{r.loop}:")}
    targets = {p: {r.tid for r in rs if id(r) in counts} for p, rs in loops.items()}
    targets = {p: tids for p, tids in targets.items() if tids}
    if not py_spy or not targets:
        return loops
    reads, failed = read_locals_once(targets, py_spy)
    notes.extend(failed)
    values = {(r.tid, r.function): r.values for rs in reads.values() for r in rs}
    return {
        p: tuple(_with_constants(r, values.get((r.tid, r.function), ())) if id(r) in counts else r for r in rs)
        for p, rs in loops.items()
    }


def _with_constants(read: LocalsRead, values: tuple[tuple[str, str], ...]) -> LocalsRead:
    """``read`` of a loop that counts, with ``values``, and the module's numbers its loop names that no local shows
    (``MAX_RETRIES = 10``, capture/flags.constants)."""
    names = frozenset(re.findall(r"\b[A-Za-z_]\w*\b", read.body or read.loop or "")) - {n for n, _ in values}
    source = "".join(linecache.getlines(read.file))
    return replace(read, values=(*values, *flags.constants(source, names)))
