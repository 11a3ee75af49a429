"""Progress without a keyhole, end to end on real jobs: heartbeats injected into any PyTorch job
(plain loops, Lightning, HF Trainer, torchrun), real progress bars under pipes and a terminal.

Here the tests that start no process; those that do are in tests/e2e/test_autobeat.py.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


# --- Lightning: rich bar (nothing printed under pipes), sleeping workers --------------------------------------


# A Lightning DataLoader hang in epoch 1 under pipes, caught and restarted from Lightning's own checkpoint:
# tests/{unit,e2e}/test_checkpoints.py (test_a_lightning_worker_hang_is_caught_and_resumed_from_its_model_checkpoint).


# --- transformers Trainer --------------------------------------------------------------------------------


def test_the_hook_writes_the_same_slot_layout_as_hangwatch_beat():
    # The hook carries its own copy of the slot writer (the job's interpreter may not have hangwatch);
    # this keeps the two from drifting apart.
    import ast
    import importlib

    from hangwatch.supervise.job.autobeat import AUTOBEAT_DIR

    beat = importlib.import_module("hangwatch.beat")  # the module (hangwatch.beat is also the function)

    hook: dict[str, object] = {}
    for node in ast.parse((AUTOBEAT_DIR / "sitecustomize.py").read_text()).body:
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)] or [
                e.id for t in node.targets if isinstance(t, ast.Tuple) for e in t.elts if isinstance(e, ast.Name)
            ]
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "Struct":
                hook[names[0]] = ast.literal_eval(value.args[0])
            elif isinstance(value, ast.Constant | ast.Tuple):
                values = ast.literal_eval(value)
                hook.update(zip(names, values if len(names) > 1 else (values,), strict=True))
    for name in ("MAGIC", "SLOT_SIZE", "NAME_SIZE", "BEAT_OFFSET", "PHASE_OFFSET"):
        assert hook[name] == getattr(beat, name), name
    for name in ("HEADER", "BEAT", "PHASE"):
        assert hook[name] == getattr(beat, name).format, name
