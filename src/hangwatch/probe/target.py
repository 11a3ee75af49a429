"""Load a probe target: `package.module:function` or `path/to/file.py:function`, returning a
Dataset (map-style or iterable) or a dict of DataLoader keyword arguments that holds the dataset."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import field
from pathlib import Path
from typing import Any

from hangwatch.errors import UsageError
from hangwatch.records.values import mutable


@mutable
class Target:
    """A dataset (and loader keyword arguments) loaded from ``module:function``."""

    spec: str
    dataset: Any
    kind: str  # "map" | "iterable"
    length: int | None
    loader_kwargs: dict[str, Any] = field(default_factory=dict)  # the user's own (collate_fn, ...)


def _import(module_part: str) -> Any:
    if module_part.endswith(".py") or "/" in module_part:
        path = Path(module_part).resolve()
        if not path.is_file():
            raise UsageError(f"no such file: {module_part}", "Give a path to a .py file, or package.module")
        # Importable by name from its folder, so spawn workers can unpickle what it defines.
        sys.path.insert(0, str(path.parent))
        return importlib.import_module(path.stem)
    return importlib.import_module(module_part)


def load_target(spec: str) -> Target:
    """Load ``pkg.module:function`` or ``path/file.py:function``; UsageError when it cannot."""
    module_part, sep, func_name = spec.rpartition(":")
    if not sep or not module_part or not func_name:
        raise UsageError(
            f"target {spec!r} is not MODULE:FUNCTION",
            "Write it as pkg.data:make_dataset or path/to/data.py:make_dataset",
        )
    try:
        module = _import(module_part)
    except UsageError:
        raise
    except Exception as e:  # the user's module failing to import: said as a usage error
        raise UsageError(
            f"cannot import {module_part}: {type(e).__name__}: {e}",
            "Fix the import error, or run from the directory the module expects",
        ) from e
    func = getattr(module, func_name, None)
    if not callable(func):
        raise UsageError(f"{module_part} has no function {func_name}", "Name a function that returns the dataset")
    try:
        made = func()
    except Exception as e:  # the user's factory failing: said as a usage error
        raise UsageError(
            f"{func_name}() raised {type(e).__name__}: {e}", "Fix the function that builds the dataset"
        ) from e
    kwargs: dict[str, Any] = {}
    if isinstance(made, dict):
        if "dataset" not in made:
            raise UsageError(
                f"{func_name}() returned a dict without 'dataset'",
                "Return the Dataset, or DataLoader keyword arguments including dataset=",
            )
        kwargs = {k: v for k, v in made.items() if k != "dataset"}
        made = made["dataset"]
    if hasattr(made, "__getitem__") and not _is_iterable_dataset(made):
        try:
            length = len(made)
        except Exception as e:  # the user's __len__ failing: said as a usage error
            raise UsageError(
                f"len() of the dataset raised {type(e).__name__}: {e}", "Fix __len__, or make it an IterableDataset"
            ) from e
        return Target(spec, made, "map", length, kwargs)
    if hasattr(made, "__iter__"):
        return Target(spec, made, "iterable", None, kwargs)
    raise UsageError(
        f"{func_name}() returned {type(made).__name__}, not a dataset",
        "Return a torch Dataset (with __getitem__ and __len__) or an IterableDataset",
    )


def _is_iterable_dataset(obj: Any) -> bool:
    try:
        from torch.utils.data import IterableDataset
    except ImportError:
        return False
    return isinstance(obj, IterableDataset)
