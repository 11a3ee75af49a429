"""Progress without a keyhole, end to end on real jobs: heartbeats injected into any PyTorch job
(plain loops, Lightning, HF Trainer, torchrun), real progress bars under pipes and a terminal.

Here the tests that start no process; those that do are in tests/e2e/test_autobeat.py.
"""

from __future__ import annotations

import sys

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
    for node in ast.parse((AUTOBEAT_DIR / "_hangwatch_hook" / "slot.py").read_text()).body:
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


def test_the_hook_and_its_rooms_import_the_standard_library_and_each_other_only():
    """The hook runs in the job's interpreter, which need not have hangwatch (or anything else) installed: each of
    its modules imports the standard library, a room of its own package (relative imports), or, inside a function,
    a part of a library it watches, once the job has imported that library; no room is over 600 lines."""
    import ast

    from hangwatch.supervise.job.autobeat import AUTOBEAT_DIR

    files = [AUTOBEAT_DIR / "sitecustomize.py", *sorted((AUTOBEAT_DIR / "_hangwatch_hook").glob("*.py"))]
    assert len(files) > 5
    watched = {"torch", "lightning", "pytorch_lightning", "transformers"}
    outside = []
    for path in files:
        text = path.read_text()
        assert len(text.splitlines()) <= 600, path
        tree = ast.parse(text)
        in_functions = {
            id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f) if n is not f
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                tops = [(node.module or "").split(".")[0]]
            else:
                continue
            outside += [
                f"{path.name}:{node.lineno} {t}"
                for t in tops
                if t not in sys.stdlib_module_names
                and t not in ("__future__", "_hangwatch_hook", "sitecustomize")
                and not (t in watched and id(node) in in_functions)
            ]
    assert not outside, outside


def test_the_slot_holds_every_step_of_a_burst_and_the_most_steps_of_any_optimizer(tmp_path, monkeypatch):
    """The hook stores the step and the count at every optimizer step, the time at most every 10 ms: a job that
    hangs right after a burst of fast steps is read at its last step, not the last one written whole; two
    optimizers (a GAN) count the most steps of either, a resumed trainer from its global step."""
    import importlib
    import time

    from hangwatch.supervise.job.autobeat import AUTOBEAT_DIR
    from hangwatch.supervise.progress.heartbeat import read_heartbeats

    monkeypatch.syspath_prepend(str(AUTOBEAT_DIR))
    slot = importlib.import_module("_hangwatch_hook.slot")
    clock = [1000.0]
    monkeypatch.setattr(slot, "_monotonic", lambda: clock[0])  # the throttle's clock: still, until moved below
    generator, discriminator = object(), object()

    beats = slot._Beats(str(tmp_path), 60.0)
    t0 = time.time()
    for _ in range(7):  # within the 10 ms of one written time: only the first writes its time
        beats.optimizer_step(generator)
    (hb,) = read_heartbeats(tmp_path)
    assert (hb.step, hb.count) == (7, 7) and t0 <= hb.at <= time.time()
    for i in range(3):
        beats.optimizer_step(discriminator)
        beats.tick()  # a batch counts, the step stays
        if i < 2:
            beats.optimizer_step(discriminator)
    (hb,) = read_heartbeats(tmp_path)
    assert (hb.step, hb.count) == (7, 15)  # the generator's 7 still the most
    first = hb.at  # written whole at the first batch (batches keep a clock of their own)
    beats.optimizer_step(discriminator)
    beats.optimizer_step(discriminator)
    beats.optimizer_step(generator)
    (hb,) = read_heartbeats(tmp_path)
    assert (hb.step, hb.count, hb.at) == (8, 18, first)  # the discriminator's 7, the generator's 8; the time kept

    resumed = tmp_path / "resumed"
    resumed.mkdir()
    beats = slot._Beats(str(resumed), 60.0)
    beats.set_start(20)
    for _ in range(3):
        beats.optimizer_step(generator)
    time.sleep(0.02)
    clock[0] += 0.02
    before = time.time()
    beats.optimizer_step(generator)  # 10 ms after the last written time: written whole
    (hb,) = read_heartbeats(resumed)
    assert (hb.step, hb.count) == (24, 4) and hb.at >= before
