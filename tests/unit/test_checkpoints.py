"""Checkpoint hand-off: autobeat records what the job saves, a restart resumes from the newest one
({checkpoint} in --resume-arg), the steps redone after a resume count as waste, and a restart that
starts again from step 0 although a checkpoint existed gets a warning.

Here the tests that start no process; those that do are in tests/e2e/test_checkpoints.py.
"""

from __future__ import annotations

import pytest

from hangwatch.supervise.job.plan import fill, fill_args
from hangwatch.supervise.progress.checkpoints import Checkpoint, CheckpointLog, redone_steps

pytest.importorskip("torch")


def test_placeholders_are_filled_or_their_option_left_out(tmp_path):
    ck = Checkpoint(1.0, "/ck/step 10.pt", 10, "torch.save", 1)
    assert fill("--resume {checkpoint} --from {checkpoint_step}", ck) == "--resume /ck/step 10.pt --from 10"
    assert fill_args("--resume {checkpoint} --workers 0", ck) == "--resume '/ck/step 10.pt' --workers 0"
    assert fill_args("--resume={checkpoint}", ck) == "'--resume=/ck/step 10.pt'"
    assert fill_args("--resume {checkpoint} --workers 0", None) == "--workers 0"  # nothing saved yet
    assert fill("{checkpoint_step}", Checkpoint(1.0, "/x", None, "dcp", 1)) is None
    assert redone_steps(12, 11) == 2 and redone_steps(12, 1) == 12 and redone_steps(12, 13) == 0
    log = CheckpointLog(tmp_path / "checkpoints.jsonl")
    assert log.poll() == []
    with open(tmp_path / "checkpoints.jsonl", "w") as f:
        f.write('{"path": "/a", "step": 1}\nnot json\n{"path": "/b"')
    assert [r["path"] for r in log.poll()] == ["/a"]
    with open(tmp_path / "checkpoints.jsonl", "a") as f:
        f.write(', "step": 2}\n')
    assert log.poll() == [{"path": "/b", "step": 2}]
