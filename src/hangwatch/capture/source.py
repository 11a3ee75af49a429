"""What a user's source line runs under, read from the file (linecache) at capture time: the locks
held around it. Rules read the result from the evidence, never the file."""

from __future__ import annotations

import linecache
import re

from hangwatch import signatures as sg

HOLD_SCAN_LINES = 60  # how far up the source to look for the `with lock:` blocks a line runs under
WITH_LOCK = re.compile(r"^(\s*)(?:async\s+)?with\s+(.+?)(?<!\s)\s*:\s*(#.*)?$")  # ends on a non-space: linear
ACQUIRE = re.compile(r"^(\s*)([\w.\[\]]+)\.acquire\(")
RELEASE = re.compile(r"(?<![\w.\[\]])([\w.\[\]]+)\.release\(")  # a name is a whole run: linear in the line
BLOCK_START = re.compile(r"^\s*(async\s+)?def\s|^\s*class\s")


def held_locks(file: str, line: int) -> tuple[str, ...]:
    """The locks held at ``file:line`` as far as the source shows: the lock-like names of the
    ``with`` blocks around it, and ``NAME.acquire()`` calls above it in enclosing blocks of the same
    function with no ``NAME.release()`` between. Innermost first; () when the file is unreadable."""
    here = linecache.getline(file, line)
    if not here.strip():
        return ()
    indent = len(here) - len(here.lstrip())
    held: list[str] = []
    released: set[str] = set()
    for n in range(line - 1, max(0, line - HOLD_SCAN_LINES), -1):
        text = linecache.getline(file, n)
        if not text.strip():
            continue
        own = len(text) - len(text.lstrip())
        m = RELEASE.search(text)
        if m and own <= indent:
            released.add(m.group(1))
        if own < indent:
            w = WITH_LOCK.match(text)
            if w:
                for item in w.group(2).split(","):
                    name = item.split(" as ")[0].strip()
                    if sg.is_lock_line(f"with {name}:"):
                        held.append(name)
            indent = own
        a = ACQUIRE.match(text)
        if a and own <= indent and a.group(2) not in released:
            held.append(a.group(2))
        if BLOCK_START.match(text) and own <= indent:
            break
    return tuple(held)
