"""The per-user index of run directories: one absolute path per line, appended by each `hangwatch run`,
so `hangwatch ls` finds runs started from any directory."""

from __future__ import annotations

import os
from pathlib import Path

from hangwatch.records.layout import RunLayout

INDEX_NAME = "runs"
MAX_LINES = 5000  # read at most this many newest entries


def state_dir(env: dict[str, str] | None = None) -> Path:
    """$XDG_STATE_HOME/hangwatch, or ~/.local/state/hangwatch."""
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / "hangwatch"


def register(run_dir: Path, env: dict[str, str] | None = None) -> bool:
    """Append ``run_dir`` to the index (one write with O_APPEND: concurrent runs never interleave).
    False where the index cannot be written (a read-only home): the run goes on without it."""
    line = (str(run_dir.resolve()) + "\n").encode()
    if b"\n" in line[:-1]:
        return False  # a path with a newline cannot be one line
    try:
        d = state_dir(env)
        d.mkdir(parents=True, exist_ok=True)
        fd = os.open(d / INDEX_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        return False
    return True


def indexed(env: dict[str, str] | None = None) -> list[Path]:
    """The run directories in the index that still exist, oldest first, each once."""
    try:
        lines = (state_dir(env) / INDEX_NAME).read_text(errors="replace").splitlines()[-MAX_LINES:]
    except OSError:
        return []
    seen: dict[str, None] = {}
    for ln in lines:
        if ln.startswith("/"):
            seen.pop(ln, None)
            seen[ln] = None
    return [Path(p) for p in seen if RunLayout(Path(p)).is_run()]
