"""What is attached to each watched library once it is imported: torch (beats, checkpoints, the DataLoader),
dynamo, distributed checkpoints, Lightning and the HF Trainer (phases, totals, checkpoints).

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

from .deaths import _RECENT_WORKERS, _excepthook, _note_dead_workers
from .loaders import _attach_loader_tasks
from .remedy import _attach_remedy
from .slot import _Beats


def _in_phase(beats: _Beats, name: str, timeout: float | None, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped so that it runs inside the phase ``name``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        beats.enter(name, timeout)
        try:
            return fn(*args, **kwargs)
        finally:
            beats.leave()

    wrapper.__hangwatch_phase__ = name  # type: ignore[attr-defined]
    return wrapper


def _attach_torch(beats: _Beats, torch: Any) -> None:
    from torch.optim.optimizer import register_optimizer_step_post_hook

    register_optimizer_step_post_hook(beats.optimizer_step)
    from torch.utils.data import dataloader

    it = dataloader._BaseDataLoaderIter
    original = it.__next__

    @functools.wraps(original)
    def __next__(self: Any) -> Any:
        try:
            if "_hangwatch_seen" not in self.__dict__:  # once an iterator
                self.__dict__["_hangwatch_seen"] = True
                _RECENT_WORKERS.append(list(getattr(self, "_workers", ())))
        except Exception:  # noqa: BLE001, S110 - an iterator that cannot be weakly referenced goes unrecorded
            pass
        try:
            data = original(self)
        except StopIteration:
            raise
        except BaseException as e:  # the workers' deaths written down; torch's error re-raised
            _note_dead_workers(beats.directory, list(getattr(self, "_workers", ())), e)
            raise
        beats.tick()
        return data

    it.__next__ = __next__  # type: ignore[method-assign]
    sys.excepthook = _excepthook(beats.directory, sys.excepthook)
    _attach_remedy(dataloader)
    try:
        _attach_loader_tasks(beats, dataloader)
    except Exception:  # noqa: BLE001, S110 - torch's DataLoader internals moved: no record of its batches
        pass
    import torch.serialization

    save = _recorded(
        beats,
        "torch.save",
        lambda a, k: a[1] if len(a) > 1 else k.get("f"),
        _in_phase(beats, "checkpoint", beats.phase_timeout, torch.serialization.save),
    )
    torch.serialization.save = save
    torch.save = save


def _recorded(
    beats: _Beats,
    kind: str,
    where: Callable[[tuple[Any, ...], dict[str, Any]], Any],
    fn: Callable[..., Any],
    step: Callable[[tuple[Any, ...]], Any] | None = None,
) -> Callable[..., Any]:
    """``fn`` that, once it has returned, records the checkpoint ``where(args, kwargs)`` names."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        try:
            beats.saved(where(args, kwargs), kind, step(args) if step is not None else None)
        except Exception:  # noqa: BLE001, S110 - never break the job
            pass
        return out

    return wrapper


def _dcp_path(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    writer = kwargs.get("storage_writer")
    return kwargs.get("checkpoint_id") or getattr(writer, "path", None) or getattr(writer, "checkpoint_id", None)


def _attach_dynamo(beats: _Beats, module: Any) -> None:
    handler = module.callback_handler
    handler.register_start_callback(lambda *a, **k: beats.enter("compile", beats.phase_timeout))
    handler.register_end_callback(lambda *a, **k: beats.leave())


def _attach_dcp(beats: _Beats, module: Any) -> None:
    for name in ("save", "async_save"):
        fn = getattr(module, name, None)
        if fn is not None:
            setattr(
                module,
                name,
                _recorded(beats, "dcp", _dcp_path, _in_phase(beats, "checkpoint", beats.phase_timeout, fn)),
            )


def _attach_lightning(beats: _Beats, module: Any) -> None:
    loop = getattr(module, "_EvaluationLoop", None)
    if loop is not None and hasattr(loop, "run"):
        loop.run = _in_phase(beats, "validation", None, loop.run)


def _attach_lightning_fit(beats: _Beats, module: Any) -> None:
    loop = getattr(module, "_FitLoop", None)
    original = getattr(loop, "on_run_start", None)
    if loop is None or original is None:
        return

    def on_run_start(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        try:
            trainer = self.trainer
            n = trainer.max_steps if trainer.max_steps and trainer.max_steps > 0 else trainer.estimated_stepping_batches
            beats.set_total(n if n != float("inf") else None)
            beats.set_start(trainer.global_step)
        except Exception:  # noqa: BLE001, S110 - a total is a nicety; never break the trainer
            pass
        return out

    loop.on_run_start = on_run_start


def _attach_transformers_callbacks(beats: _Beats, module: Any) -> None:
    handler = getattr(module, "CallbackHandler", None)
    original = getattr(handler, "on_train_begin", None)
    if handler is None or original is None:
        return

    def on_train_begin(self: Any, args: Any, state: Any, control: Any) -> Any:
        beats.set_total(getattr(state, "max_steps", None))
        beats.set_start(getattr(state, "global_step", None))
        return original(self, args, state, control)

    handler.on_train_begin = on_train_begin


def _attach_transformers(beats: _Beats, module: Any) -> None:
    trainer = getattr(module, "Trainer", None)
    if trainer is not None and hasattr(trainer, "evaluate"):
        trainer.evaluate = _in_phase(beats, "validation", None, trainer.evaluate)
    if trainer is not None and hasattr(trainer, "_save_checkpoint"):  # output_dir/checkpoint-<global step>

        def hf_dir(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            self = args[0]
            step = self.state.global_step
            out = self._get_output_dir(trial=kwargs.get("trial", args[2] if len(args) > 2 else None))
            path = os.path.join(out, f"checkpoint-{step}")
            return path if os.path.isdir(path) else None

        trainer._save_checkpoint = _recorded(
            beats, "transformers", hf_dir, trainer._save_checkpoint, step=lambda a: a[0].state.global_step
        )


def _attach_lightning_trainer(beats: _Beats, module: Any) -> None:
    trainer = getattr(module, "Trainer", None)
    if trainer is not None and hasattr(trainer, "save_checkpoint"):
        trainer.save_checkpoint = _recorded(
            beats,
            "lightning",
            lambda a, k: a[1] if len(a) > 1 else k.get("filepath"),
            trainer.save_checkpoint,
            step=lambda a: a[0].global_step,
        )
