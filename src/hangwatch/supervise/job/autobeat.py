"""What `hangwatch run` adds to a job's environment so that its Python processes beat by themselves.

The hook itself is ``hangwatch/_autobeat/sitecustomize.py`` and its rooms, the package ``_hangwatch_hook`` beside it
(standard library only, so the job's interpreter needs no hangwatch); this module only decides the environment.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import hangwatch
from hangwatch.records.layout import (
    BORN,
    FLIGHT_PREFIX,
    HEAL_ANSWERS_SUFFIX,
    HEAL_REQUEST_SUFFIX,
    HEAL_TAKEN_PREFIX,
    LOADER_SUFFIX,
    WORKER_DEATHS,
)

AUTOBEAT_DIR = Path(hangwatch.__file__).resolve().parent / "_autobeat"


# torch's flight recorder: the entries it keeps per process group. torch 2.13 reads TORCH_FR_BUFFER_SIZE for gloo
# and NCCL alike, and warns that TORCH_NCCL_TRACE_BUFFER_SIZE (what torch before 2.6 reads) is deprecated: only
# the first is set, and neither when the user set either. 2000 is NCCL's documented size.
FLIGHT_BUFFER = "2000"
FLIGHT_VARS = ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE")
HEAL_ENV = "HANGWATCH_HEAL"  # how many workers the job may replace in place (--on-hang heal; the hook reads it)
HEAL_SKIP_ENV = "HANGWATCH_HEAL_SKIP"  # the samples earlier attempts left out (JSON: dataset key -> indices)


def autobeat_env(env: dict[str, str], enabled: bool, phase_timeout_s: float, flight: bool = True) -> dict[str, str]:
    """The variables to set: the hook's directory first on PYTHONPATH (kept once), the deadline of
    checkpoint and compile phases, the flight recorder's buffer (unless the user set one); or, when
    disabled, the switch that keeps an inherited hook idle."""
    if not enabled:
        return {"HANGWATCH_AUTOBEAT": "0", "HANGWATCH_FLIGHT": "0"}
    here = str(AUTOBEAT_DIR)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != here]
    out = {
        "PYTHONPATH": os.pathsep.join([here, *rest]),
        "HANGWATCH_AUTOBEAT": "1",
        "HANGWATCH_PHASE_TIMEOUT": f"{phase_timeout_s:g}",
    }
    if not flight:
        out["HANGWATCH_FLIGHT"] = "0"
    elif not any(env.get(v) for v in FLIGHT_VARS):
        out[FLIGHT_VARS[0]] = FLIGHT_BUFFER
    return out


def remove_loader_records(heartbeat_dir: Path) -> None:
    """The DataLoader iterators' batch records (heartbeat/<pid>-<n>.dl), heal's asks and answers, the workers seen
    dead (read when the attempt's crash was named) and the births not yet read: a job ended by a signal leaves them;
    gone before a relaunch (a new process could get a recorded pid) and when the run ends."""
    patterns = (f"*{LOADER_SUFFIX}", f"*{HEAL_REQUEST_SUFFIX}", f"*{HEAL_ANSWERS_SUFFIX}", f"{HEAL_TAKEN_PREFIX}*")
    for pattern in (*patterns, WORKER_DEATHS, f"{BORN}/*", f"{BORN}/.*"):
        for path in heartbeat_dir.glob(pattern):
            with contextlib.suppress(OSError):
                path.unlink()


def remove_sockets_outside(heartbeat_dir: Path) -> None:
    """The ranks' worker-server sockets that live outside the run directory (its path was too long for a
    unix socket: autobeat put them in a directory of the user's own under the system's temporary directory),
    removed once the job has ended: a rank ended by a signal leaves its socket behind."""
    for reg in heartbeat_dir.glob(f"{FLIGHT_PREFIX}*.json"):
        try:
            sock = json.loads(reg.read_text()).get("socket")
        except (OSError, ValueError, AttributeError):
            continue
        if (
            isinstance(sock, str)
            and Path(sock).name.startswith(FLIGHT_PREFIX)
            and heartbeat_dir not in Path(sock).parents
        ):
            with contextlib.suppress(OSError):
                Path(sock).unlink()
