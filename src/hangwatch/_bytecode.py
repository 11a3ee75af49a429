"""hangwatch's own bytecode, where Python may not write it beside the source.

An editable install (`pip install -e`, what the README sets up) gets no bytecode at install, and with
PYTHONDONTWRITEBYTECODE set (many images and CI machines set it) Python never writes any: every `hangwatch`
command then compiles each module it imports from source, every time (`hangwatch run -- true`: 0.157 s against
0.106 s with bytecode, measured here). So the command line, and only it, keeps the bytecode of what it imports
under ``$XDG_CACHE_HOME/hangwatch/pycache`` (``~/.cache/...``) instead: nothing is written beside any source, the
job's own interpreters are untouched, and where bytecode is beside the source (a regular install) nothing changes.
Standard library only, imported before everything else the command line imports.
"""

from __future__ import annotations

import os
import stat
import sys

CACHE = ("hangwatch", "pycache")


def use_own_cache(package: str | None = None) -> str | None:
    """Read and write this process's bytecode under hangwatch's cache when Python may not write it beside the source
    and hangwatch's own (``package``: this package's directory) is not there; the cache chosen, or None."""
    if not sys.dont_write_bytecode or sys.pycache_prefix is not None or sys.implementation.cache_tag is None:
        return None
    here = package or os.path.dirname(os.path.abspath(__file__))
    if os.path.exists(os.path.join(here, "__pycache__", f"cli.{sys.implementation.cache_tag}.pyc")):
        return None  # compiled beside the source (pip install, or a test run's compileall): read as it is
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    cache = os.path.join(base, *CACHE)
    try:
        os.makedirs(cache, mode=0o700, exist_ok=True)
        st = os.lstat(cache)
    except OSError:
        return None  # no cache to write to: compiled from source, as before
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None  # a directory someone else could write code into (a shared XDG_CACHE_HOME): never read from it
    if not os.access(cache, os.W_OK | os.X_OK):
        return None
    sys.pycache_prefix = cache
    sys.dont_write_bytecode = False
    return cache
