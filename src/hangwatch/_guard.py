"""The guardian: a tiny process beside each attempt of the job that ends the job's whole tree if
hangwatch itself dies (SIGKILL, the OOM killer, `scancel` without a grace).

    python -S hangwatch/_guard.py SUPERVISOR_PID JOB_PID GRACE_S

Standard library only and started with -S (no site, no imports of hangwatch): about 15 ms and a few
MiB. While its parent (the supervisor) lives, it remembers every process of the job: the job's
descendants and the members of its session, each by pid and start time, so a reused pid is never
signalled. When the parent is gone it sends SIGTERM and SIGCONT (a stopped process cannot act on
SIGTERM) to all of them, waits GRACE_S, SIGKILLs what is left, and exits. It exits as well when
the job's tree is empty, and the supervisor kills it once the attempt is over: it never outlives
both.
"""

from __future__ import annotations

import os
import signal
import sys
import time

POLL_S = 0.2
SCAN_EVERY_S = 1.0


def _stat(pid: int) -> tuple[int, int, str, int] | None:
    """(ppid, session, state, start time) of a pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[3]), fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


def _scan(root: int, root_sid: int, known: dict[int, int]) -> None:
    """Add the job's processes seen now: the root's descendants and the members of its session."""
    table: dict[int, tuple[int, int, str, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                table[int(name)] = st
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    todo = [root, *(p for p, (_, sid, _, _) in table.items() if sid == root_sid)]
    while todo:
        pid = todo.pop()
        if pid in table and pid not in known and pid != os.getpid():
            known[pid] = table[pid][3]
            todo.extend(children.get(pid, []))


def _alive(known: dict[int, int]) -> list[int]:
    out = []
    for pid, start in known.items():
        st = _stat(pid)
        if st is not None and st[3] == start and st[2] != "Z":
            out.append(pid)
    return out


def _signal_all(pids: list[int], *signums: int) -> None:
    for pid in pids:
        for signum in signums:
            try:
                os.kill(pid, signum)
            except (ProcessLookupError, PermissionError):
                pass


def main(argv: list[str]) -> int:
    """Guard one attempt; see the module docstring."""
    supervisor, root, grace = int(argv[1]), int(argv[2]), float(argv[3])
    for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)  # only the supervisor ends us, or its death
    st = _stat(root)
    if st is None:
        return 0
    root_sid = st[1]
    known: dict[int, int] = {}
    last_scan = 0.0
    while os.getppid() == supervisor:
        now = time.monotonic()
        if now - last_scan >= SCAN_EVERY_S:
            _scan(root, root_sid, known)
            last_scan = now
            if not _alive(known):
                return 0  # the job is over; nothing to guard
        time.sleep(POLL_S)
    # The supervisor is gone: end the whole tree, as it would have.
    _scan(root, root_sid, known)
    _signal_all(_alive(known), signal.SIGTERM, signal.SIGCONT)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _scan(root, root_sid, known)  # children started meanwhile belong to the job too
        left = _alive(known)
        if not left:
            return 0
        _signal_all([p for p in left if (st := _stat(p)) is not None and st[2] in "Tt"], signal.SIGCONT)
        time.sleep(POLL_S)
    _signal_all(_alive(known), signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
