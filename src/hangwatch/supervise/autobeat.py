"""What `hangwatch run` adds to a job's environment so that its Python processes beat by themselves.

The hook itself is ``hangwatch/_autobeat/sitecustomize.py`` (standard library only, so the job's
interpreter needs no hangwatch); this module only decides the environment.
"""

from __future__ import annotations

import os
from pathlib import Path

import hangwatch

AUTOBEAT_DIR = Path(hangwatch.__file__).resolve().parent / "_autobeat"


def autobeat_env(env: dict[str, str], enabled: bool, phase_timeout_s: float) -> dict[str, str]:
    """The variables to set: the hook's directory first on PYTHONPATH (kept once), the deadline of
    checkpoint and compile phases; or, when disabled, the switch that keeps an inherited hook idle."""
    if not enabled:
        return {"HANGWATCH_AUTOBEAT": "0"}
    here = str(AUTOBEAT_DIR)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != here]
    return {"PYTHONPATH": os.pathsep.join([here, *rest]), "HANGWATCH_AUTOBEAT": "1",
            "HANGWATCH_PHASE_TIMEOUT": f"{phase_timeout_s:g}"}
