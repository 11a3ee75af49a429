"""The exceptions the job printed: which rank raised what, at which line of its own code.

A rank that raised leaves the others waiting in their next collective (NCCL's watchdog ends them half an hour
later; a rank that cannot exit never does), or, on gloo, failing with "Connection closed by peer" a moment after.
Either way the rank that raised first is the cause, and its traceback is in the job's log: Python's own
(``Traceback (most recent call last):`` ... ``ValueError: ...``), under torchrun's ``[rank1]:`` or
``--tee``'s ``[default1]:`` prefixes, or after multiprocessing's ``Process rank1:`` line.
"""

from __future__ import annotations

import functools
import linecache
import re

from hangwatch import signatures as sg
from hangwatch.records.evidence import Frame
from hangwatch.records.incident import Where
from hangwatch.records.values import frozen

# torch's "[rank9]:" (the global rank), torchrun --tee's "[default1]:" (role and LOCAL rank: not a rank to
# name); both may lead one line: "[default1]:[rank9]: Traceback ..."
_PREFIX = re.compile(r"^\[([A-Za-z_]\w{0,31}?)(\d{1,9})\]:\s?")  # bounded: linear on a long line
_GLUED_PREFIXES = re.compile(
    r"(?:\[[A-Za-z_]\w{0,31}?\d{1,9}\]:\s?){1,8}$"
)  # prefixes at the end of another stream's text
# multiprocessing, before a child's traceback: "Process rank1:" (a name with "rank" in it, not "Process-1")
_PROCESS = re.compile(r"^Process (\S{0,63}rank\S{0,63}?)(\d{1,9}):\s*$", re.IGNORECASE)
_FILE = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)')
_LAST = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")
# A DataLoader worker's exception, raised again in the main process: the worker's own traceback follows it.
_CAUGHT = re.compile(r"Caught \w+ in DataLoader worker process (\d+)")
TRACEBACK = "Traceback (most recent call last):"
_ORIGINAL = f"Original {TRACEBACK}"
# What a rank raises because another rank went away: a consequence, never the cause.
COMMUNICATION = (
    "Connection closed by peer",
    "Connection reset by peer",
    "Broken pipe",
    "NCCL communicator was aborted",
    "ProcessGroupNCCL",
    "Watchdog caught collective operation timeout",
    "DistBackendError",
    "DistNetworkError",
    "Socket Timeout",
    "SignalException",
    "ChildFailedError",  # torchrun reporting its ranks' failure
)
# What an executor raises because a worker died (in its initializer, or killed): the worker's own traceback, printed
# before it ("Exception in initializer:"), is the cause where the log holds one
BROKEN_POOL = ("BrokenProcessPool", "BrokenThreadPool")


@frozen
class Raised:
    """One traceback in the log: who raised (its rank, when the log says), what, and the user's line."""

    rank: int | None
    exception: str  # ``ValueError: validation_step: shapes do not match``
    frame: Frame | None  # the innermost frame of the job's own code
    worker: int | None = None  # raised in this DataLoader worker (torch printed its "Original Traceback")

    @property
    def communication(self) -> bool:
        """It is a collective failing because a peer went away, not a cause."""
        return any(t in self.exception for t in COMMUNICATION)

    def text(self) -> str:
        """``raised ValueError: ... at train.py:25 (main)``."""
        at = f" at {self.frame.file.rsplit('/', 1)[-1]}:{self.frame.line} ({self.frame.function})" if self.frame else ""
        worker = f" in DataLoader worker {self.worker}" if self.worker is not None else ""
        return f"raised {self.exception[:200]}{at}{worker}"

    def where(self, pid: int, rank: int | None) -> Where | None:
        """The line that raised, as a finding's ``where``."""
        if self.frame is None:
            return None
        f = self.frame
        return Where(pid=pid, rank=rank, tid=None, file=f.file, line=f.line, function=f.function, code=f.code)


def _split(raw: str) -> tuple[str, str, int | None]:
    """A log line as (the line, its stream: the prefixes it carries, the rank they name). A traceback's first line
    after another stream's unfinished one (stdout's `step 5` before its newline came, a progress bar's last frame)
    starts where the traceback does."""
    line, stream, rank = raw, "", None
    while (m := _PREFIX.match(line)) is not None:
        stream += m.group(0).strip()
        if m.group(1) == "rank":
            rank = int(m.group(2))
        line = line[m.end() :]
    glued = line.find(TRACEBACK)
    if glued > 0:
        start = glued - len("Original ") if line[:glued].endswith("Original ") else glued
        before = line[:start]
        if before.strip() and _LAST.match(before.strip()) is None:  # not an exception's own line quoting one
            prefixes = _GLUED_PREFIXES.search(before)
            if prefixes is not None:  # another rank's line, then this rank's prefixes: its stream, not the other's
                return _split(line[prefixes.start() :])
            line = line[start:]
    return line, stream, rank


@functools.lru_cache(maxsize=8)
def tracebacks(text: str) -> tuple[Raised, ...]:
    """Every complete traceback in ``text``, in the order printed, each with its rank where a prefix or
    multiprocessing's ``Process NAME<digits>:`` line names it; parsed once per log text (a diagnosis asks once per
    missing rank: 256 of them on 32 nodes)."""
    out: list[Raised] = []
    open_: dict[str, list[Frame]] = {}  # per stream (its prefixes): the frames of a traceback being read
    named: int | None = None  # the rank the last ``Process rankN:`` line named, for the unprefixed stream
    # per stream: the DataLoader worker whose exception was just raised again in the main process, and where that
    # re-raise sits in ``out`` (the worker's original traceback, printed after it, takes its place)
    caught: dict[str, tuple[int, int]] = {}
    worker: dict[str, tuple[int, int]] = {}  # per stream: the same, while the original traceback is read
    lines = text.splitlines()
    for n, raw in enumerate(lines):
        line, stream, rank = _split(raw)
        if not stream and (p := _PROCESS.match(line)) is not None:
            named = int(p.group(2))
            continue
        if line.startswith(TRACEBACK):
            open_[stream] = []
            caught.pop(stream, None)  # a new traceback: no worker's original follows the last one any more
            worker.pop(stream, None)
            continue
        if line.startswith(_ORIGINAL) and stream in caught:
            open_[stream] = []
            worker[stream] = caught.pop(stream)
            continue
        frames = open_.get(stream)
        if frames is None:
            continue
        f = _FILE.match(line)
        if f is not None:
            frames.append(Frame(function=f.group(3), file=f.group(1), line=int(f.group(2))))
            continue
        if line[:1].isspace() or not line.strip():
            continue  # a source line, a ^^^^ marker
        last = _LAST.match(line.strip())
        if last is None or not _ends(last.group(1), lines, n, stream):
            # Not an exception's line: another stream's (stdout and stderr reach the log through two pipes, so
            # a `step 5` printed before the crash can land inside its traceback). The traceback goes on.
            continue
        del open_[stream]
        if not frames:
            continue
        who = rank if stream else named
        user = next((fr for fr in reversed(frames) if sg.is_user(fr)), None)
        if user is not None:
            user = Frame(
                user.function, user.file, user.line, code=linecache.getline(user.file, user.line).strip() or None
            )
        exc = last.group(1) + (f": {last.group(2)}" if last.group(2) else "")
        origin = worker.pop(stream, None)
        if origin is not None:  # the worker's own error, at its line; the main process's line where it has none
            main = out[origin[1]]
            out[origin[1]] = Raised(main.rank if who is None else who, exc, user or main.frame, origin[0])
        else:
            out.append(Raised(who, exc, user))
            if (c := _CAUGHT.search(exc)) is not None:
                caught[stream] = (int(c.group(1)), len(out) - 1)
        if not stream:
            named = None
    return tuple(out)


def _ends(name: str, lines: list[str], n: int, stream: str) -> bool:
    """Whether line ``n``, read as the exception ``name``, ends its traceback: a class name (capitalised, not a
    log level's capitals), and the traceback's own lines do not go on after it (a frame of it, or its source)."""
    if not _class_like(name):
        return False
    for raw in lines[n + 1 : n + 4]:
        line, other, _ = _split(raw)
        if other != stream or not line.strip():
            continue
        if _FILE.match(line) is not None:
            return False  # a frame follows: this line was another stream's, inside the traceback
        last = _LAST.match(line.strip())
        return last is None or not _class_like(last.group(1))  # the exception's own line comes next
    return True


def _class_like(name: str) -> bool:
    cls = name.rsplit(".", 1)[-1]
    return cls[:1].isupper() and not cls.isupper()


def first_cause(text: str) -> Raised | None:
    """The traceback that started it, at a line of the job's own code, not a collective failing for a peer's
    sake: across ranks the first one a rank printed; in a log that names no rank, the last one (the error that
    ended the process, after any it logged and survived), an executor's broken pool aside where a worker's own
    traceback is there."""
    found = [r for r in tracebacks(text) if not r.communication and r.frame is not None]
    causes = [r for r in found if not any(b in r.exception for b in BROKEN_POOL)] or found
    ranked = [r for r in causes if r.rank is not None]
    return ranked[0] if ranked else (causes[-1] if causes else None)


# Python, as an exception ends a thread (threading.excepthook): "Exception in thread Thread-1 (refresh):", its traceback
_THREAD_DIED = re.compile(r"^Exception in thread ([^\n]{1,200}):[ \t]*$", re.MULTILINE)


def thread_deaths(text: str) -> tuple[tuple[str, Raised], ...]:
    """Each thread whose end on an exception Python printed, by its name, with what it raised (in the order printed)."""
    heads = list(_THREAD_DIED.finditer(text))
    out = []
    for i, m in enumerate(heads):
        part = text[m.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        found = tracebacks(part)
        if found:  # (of a chain, the last: what ended the thread; not a traceback printed after it)
            out.append((m.group(1), found[min(_chained(part), len(found)) - 1]))
    return tuple(out)


_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")


def _chained(text: str) -> int:
    """How many tracebacks ``text`` opens with, chained (Python prints them apart by a blank line and one of
    ``_CHAINED``)."""
    parts = text.lstrip("\n").split("\n\n")
    n = 1
    while n + 1 < len(parts) and parts[n].strip().startswith(_CHAINED):
        n += 2
    return (n + 1) // 2


def raised_by(text: str, rank: int) -> Raised | None:
    """The last exception rank ``rank`` printed at a line of its own code (not a communication failure)."""
    return next(
        (r for r in reversed(tracebacks(text)) if r.rank == rank and not r.communication and r.frame is not None), None
    )


def job_log(tails: list[str | None]) -> str:
    """The job's output the capture holds (each process's tail once)."""
    return "\n".join(dict.fromkeys(t for t in tails if t))
