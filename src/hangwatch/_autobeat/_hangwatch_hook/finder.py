"""The import finder: once a watched module is imported, what is watched for it is attached (its room loaded
then, not at the job's start).

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import importlib
import sys

from .slot import _Beats

TYPE_CHECKING = False  # typing is not imported at the job's start (about 7 ms of every Python process's start)
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


# module -> (the room, the function that attaches to it): the room is imported with the module it watches
WATCH: dict[str, tuple[str, str]] = {
    "torch": ("libraries", "_attach_torch"),
    "torch.distributed": ("flight", "_attach_distributed"),
    "torch._dynamo.callback": ("libraries", "_attach_dynamo"),
    "torch.distributed.checkpoint": ("libraries", "_attach_dcp"),
    "lightning.pytorch.loops.evaluation_loop": ("libraries", "_attach_lightning"),
    "pytorch_lightning.loops.evaluation_loop": ("libraries", "_attach_lightning"),
    "transformers.trainer": ("libraries", "_attach_transformers"),
    "transformers.trainer_callback": ("libraries", "_attach_transformers_callbacks"),
    "lightning.pytorch.loops.fit_loop": ("libraries", "_attach_lightning_fit"),
    "lightning.pytorch.trainer.trainer": ("libraries", "_attach_lightning_trainer"),
    "pytorch_lightning.trainer.trainer": ("libraries", "_attach_lightning_trainer"),
    "pytorch_lightning.loops.fit_loop": ("libraries", "_attach_lightning_fit"),
}


class _Loader:
    """The real loader; after it has run the module, attach what is watched for it."""

    def __init__(self, loader: Any, attach: tuple[str, str], beats: _Beats, pending: dict[str, Any], name: str) -> None:
        self._loader = loader
        self._attach = attach
        self._beats = beats
        self._pending = pending
        self._name = name

    def create_module(self, spec: Any) -> ModuleType | None:
        """The real loader's."""
        module: ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Run the module, then attach (once: importlib.util.find_spec probes may come before)."""
        self._loader.exec_module(module)
        if self._pending.pop(self._name, None) is None:
            return
        try:
            room, function = self._attach
            getattr(importlib.import_module(f".{room}", __package__), function)(self._beats, module)
        except Exception:  # noqa: BLE001, S110 - private torch APIs move: no beats from there, never a broken job
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _Finder:
    """A meta path finder that only wraps the loaders of the watched modules, once each."""

    def __init__(self, beats: _Beats) -> None:
        self.beats = beats
        self.pending = dict(WATCH)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        """The real spec of a watched module, its loader wrapped; None for everything else."""
        attach = self.pending.get(name)
        if attach is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module") and not isinstance(spec.loader, _Loader):
            spec.loader = _Loader(spec.loader, attach, self.beats, self.pending, name)  # type: ignore[assignment]
        return spec
