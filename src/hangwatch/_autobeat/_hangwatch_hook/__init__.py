"""hangwatch's startup hook, as a package of rooms: the slot (``slot``), the import finder (``finder``), births
(``born``) load at the job's start; the rest once the library it watches is imported: the batch record
(``batches``, ``loaders``), heal (``heal``), the per-library hooks (``libraries``, ``deaths``, ``remedy``), the flight
recorder server (``flight``). ``../sitecustomize.py`` runs ``install`` (the module docstring there says what it
installs).

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed. What the rooms
share is passed to them (the slot: ``beats``) or lives in the room that owns it.
"""

from __future__ import annotations

import os
import sys

from .born import _born
from .finder import _Finder
from .slot import _Beats


def _reset_flight_reader() -> None:
    """After fork: the flight room's reader thread did not come along (a room not loaded has none)."""
    flight = sys.modules.get(f"{__name__}.flight")
    if flight is not None:
        flight._reader_reset()


def install() -> None:
    """Install the hook in this process: its slot, the finder, the records at each fork; nothing where
    ``$HANGWATCH_HEARTBEAT_DIR`` is unset or ``$HANGWATCH_AUTOBEAT`` is 0."""
    directory = os.environ.get("HANGWATCH_HEARTBEAT_DIR")
    if not directory or os.environ.get("HANGWATCH_AUTOBEAT", "1") == "0":
        return
    try:
        timeout = float(os.environ.get("HANGWATCH_PHASE_TIMEOUT", "1800"))
    except ValueError:
        timeout = 1800.0
    beats = _Beats(directory, timeout)
    _born(directory)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=beats.reset)
        os.register_at_fork(after_in_child=_reset_flight_reader)
        os.register_at_fork(after_in_child=lambda: _born(directory))
    sys.meta_path.insert(0, _Finder(beats))
