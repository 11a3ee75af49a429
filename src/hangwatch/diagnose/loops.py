"""Does a spinning loop get anywhere? Judged from the locals of its innermost user frame, read twice
by capture's second pass: a counter that grows means progress; a loop condition whose names never
change while the CPU burns means a spin."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hangwatch.evidence import LocalsRead

NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
KEYWORDS = frozenset({"while", "for", "in", "not", "and", "or", "is", "None", "True", "False", "if", "else",
                      "lambda", "len", "range", "enumerate", "zip"})


@dataclass(frozen=True)
class LoopMotion:
    """What the locals say: whether the loop advanced, and the evidence text to quote."""

    advanced: bool
    evidence: str
    seconds: float


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def loop_motion(reads: tuple[LocalsRead, ...]) -> LoopMotion | None:
    """Compare the first and last read of the same function; None without two such reads."""
    if len(reads) < 2:
        return None
    first, last = reads[0], reads[-1]
    if (first.file, first.function) != (last.file, last.function):
        return None
    seconds = max(0.0, last.at - first.at)
    before, after = dict(first.values), dict(last.values)
    changed = {n: (before[n], after[n]) for n in before if n in after and before[n] != after[n]}
    header = last.loop
    cond_names: set[str] = set()
    if header is not None and header.startswith("while"):
        cond_names = {n for n in NAME.findall(header[len("while"):]) if n not in KEYWORDS and n in after}
    elif header is not None and header.startswith("for"):
        target = header[len("for"):].split(" in ", 1)[0]
        cond_names = {n for n in NAME.findall(target) if n in after}
    if cond_names:
        moving = sorted(n for n in cond_names if n in changed)
        if moving:
            n = moving[0]
            return LoopMotion(True, f"`{header}`: `{n}` {changed[n][0]} -> {changed[n][1]} in {seconds:.1f} s",
                              seconds)
        stayed = ", ".join(f"`{n}` stayed {after[n]}" for n in sorted(cond_names))
        return LoopMotion(False, f"`{header}`: {stayed} for {seconds:.1f} s while the CPU burned", seconds)
    grown = sorted(n for n, (a, b) in changed.items() if (x := _int(a)) is not None and (y := _int(b)) is not None
                   and y > x)
    if grown:
        n = grown[0]
        return LoopMotion(True, f"`{n}` {changed[n][0]} -> {changed[n][1]} in {seconds:.1f} s", seconds)
    if changed:
        return None  # values move but nothing counts: no verdict from the locals
    shown = ", ".join(f"`{n}` = {v}" for n, v in list(after.items())[:4]) or "no locals"
    return LoopMotion(False, f"locals unchanged over {seconds:.1f} s ({shown})", seconds)
