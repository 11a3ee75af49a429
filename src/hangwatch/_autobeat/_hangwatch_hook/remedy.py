"""A remedy hangwatch chose for a restart (``--fallback``), applied to each DataLoader the job makes.

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from typing import Any


def _remedy_kwargs(kwargs: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The DataLoader keyword arguments with a restart's remedy applied; only what makes sense."""
    out = dict(kwargs)
    workers = int(out.get("num_workers") or 0)
    if "max_workers" in overrides and workers > int(overrides["max_workers"]):
        workers = out["num_workers"] = int(overrides["max_workers"])
    if "num_workers" in overrides:
        workers = out["num_workers"] = int(overrides["num_workers"])
    if workers == 0:
        for k in ("multiprocessing_context", "prefetch_factor"):
            out.pop(k, None)
        out["persistent_workers"] = False
        return out
    for k in ("multiprocessing_context", "persistent_workers", "prefetch_factor"):
        if k in overrides:
            out[k] = overrides[k]
    return out


def _main_is_guarded() -> bool:
    """Whether the main script runs its work under ``if __name__ == "__main__":`` (spawn-safe)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path:
        return True  # python -m pkg / -c: leave it to the job
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return True
    return "__name__ ==" in text or "__name__==" in text


def _unpicklable(kwargs: dict[str, Any]) -> str | None:
    """What of a DataLoader's arguments a spawned worker could not receive, or None."""
    import pickle

    for key in ("dataset", "collate_fn", "worker_init_fn", "sampler", "batch_sampler"):
        value = kwargs.get(key)
        if value is None:
            continue
        try:
            pickle.dumps(value)
        except Exception as e:  # noqa: BLE001 - any failure to pickle means spawn cannot ship it
            return f"its {key} cannot be pickled ({type(e).__name__})"
    return None


def _spawnable(changed: dict[str, Any], note: str | None) -> tuple[dict[str, Any], str | None]:
    """The remedy's DataLoader arguments, with no workers instead where spawn would crash at the first batch (a loader
    that cannot be pickled), and why (else ``note``)."""
    if changed.get("multiprocessing_context") not in ("spawn", "forkserver") or not changed.get("num_workers"):
        return changed, note
    why_not = _unpicklable(changed)
    if not why_not:
        return changed, note
    kept = {
        k: v
        for k, v in changed.items()
        if k not in ("multiprocessing_context", "persistent_workers", "prefetch_factor")
    }
    return {**kept, "num_workers": 0}, f"spawn needs a picklable loader: {why_not}"


def _attach_remedy(dataloader: Any) -> None:
    """On a restart hangwatch chose a remedy for: override DataLoader arguments as each one is built,
    and say so once on stderr."""
    raw = os.environ.get("HANGWATCH_REMEDY_DATALOADER")
    if not raw:
        return
    import inspect

    overrides = json.loads(raw)
    why = os.environ.get("HANGWATCH_REMEDY_WHY", "a hang")
    guard = None
    if overrides.get("multiprocessing_context") in ("spawn", "forkserver") and not _main_is_guarded():
        # spawn re-imports the main script in each worker: without the guard the job would crash.
        overrides = {"num_workers": 0}
        guard = 'spawn needs `if __name__ == "__main__":` in the main script'
    cls = dataloader.DataLoader
    original = cls.__init__
    signature = inspect.signature(original)
    said: set[str] = set()

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            bound = signature.bind(self, *args, **kwargs)
            given = {k: v for k, v in bound.arguments.items() if k != "self"}
            changed = _remedy_kwargs(given, overrides)
        except Exception:  # noqa: BLE001 - an unexpected signature: build it as the job asked
            original(self, *args, **kwargs)
            return
        changed, note = _spawnable(changed, guard)
        diff = {
            k: v
            for k, v in changed.items()
            if given.get(k, signature.parameters[k].default if k in signature.parameters else None) != v
        }
        text = ", ".join(f"{k}={v!r}" for k, v in sorted(diff.items()))
        if text and text not in said:
            said.add(text)
            sys.stderr.write(f"hangwatch: remedy for {why}: DataLoader({text})" + (f" ({note})" if note else "") + "\n")
        original(self, **changed)

    cls.__init__ = __init__
