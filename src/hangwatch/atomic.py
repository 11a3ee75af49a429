"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hangwatch.errors import UsageError


def write_text_atomic(path: Path, text: str, durable: bool = True) -> None:
    """Write to a temporary file in the same directory, fsync, then rename over ``path``. ``durable=False``
    leaves out the fsync: a reader still sees the old file or the new one, but after a machine crash the file may be
    the old one, or empty (some file systems): for a file rewritten every few seconds whose readers take an
    unreadable one as missing, such as a running job's summary.json."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}", "Choose a directory you can write to") from e
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; the file should look like any other
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # the temporary file goes, whatever stopped the write; re-raised
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
