"""System facts the supervisor reads around a job: OOM kills counted by our cgroup."""

from __future__ import annotations

from pathlib import Path


def cgroup_oom_kills(pid: int) -> int | None:
    """The ``oom_kill`` counter of the process's cgroup v2 (None where unreadable)."""
    try:
        line = Path(f"/proc/{pid}/cgroup").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    rel = line.split("::", 1)[-1] if "::" in line else None
    if rel is None:
        return None
    try:
        text = (Path("/sys/fs/cgroup") / rel.lstrip("/") / "memory.events").read_text()
    except OSError:
        return None
    for ln in text.splitlines():
        k, _, v = ln.partition(" ")
        if k == "oom_kill" and v.strip().isdigit():
            return int(v)
    return None
