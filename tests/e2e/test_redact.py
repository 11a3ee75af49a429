"""Secrets never reach a file or a message.

Here the tests that start real processes; those that start none are in tests/unit/test_redact.py.
"""

from __future__ import annotations

import pytest
from conftest import run_hangwatch

from hangwatch.redact import REDACTED

HF = "hf_" + "a1B2c3D4e5F6g7H8i9J0kLmN"
OPENAI = "sk-" + "proj_ABCDEFGHIJKLMNOPQRSTUV"


@pytest.mark.e2e
def test_secret_on_a_jobs_command_line_never_reaches_the_output(start_job):
    import sys

    from conftest import SCENARIOS

    job = start_job([sys.executable, str(SCENARIOS / "sleeper.py"), "--hf-token", HF, f"OPENAI_API_KEY={OPENAI}"])
    outputs = {}
    for mode, args in (("json", ["--json"]), ("text", [])):
        r = run_hangwatch("inspect", str(job.pid), "--window", "0.5", *args)
        assert r.returncode == 0, r.stderr
        outputs[mode] = r.stdout + r.stderr
        assert HF not in outputs[mode]
        assert OPENAI not in outputs[mode]
    assert f"--hf-token {REDACTED} OPENAI_API_KEY={REDACTED}" in outputs["json"]
