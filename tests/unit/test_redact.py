"""Secrets never reach a file or a message.

Here the tests that start no process; those that do are in tests/e2e/test_redact.py.
"""

from __future__ import annotations

import pytest

from hangwatch.redact import REDACTED, redact_argv, redact_text

HF = "hf_" + "a1B2c3D4e5F6g7H8i9J0kLmN"
OPENAI = "sk-" + "proj_ABCDEFGHIJKLMNOPQRSTUV"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["train.py", "--hf-token", HF, "--lr", "3e-4"], ["train.py", "--hf-token", REDACTED, "--lr", "3e-4"]),
        (["train.py", "--api-key=abc123"], ["train.py", "--api-key=" + REDACTED]),
        (["train.py", "--password", "hunter2"], ["train.py", "--password", REDACTED]),
        (["env", "WANDB_API_KEY=0123456789abcdef"], ["env", "WANDB_API_KEY=" + REDACTED]),
        (["train.py", "--resume", OPENAI], ["train.py", "--resume", REDACTED]),
        (["train.py", "--batch-size", "32", "--workers", "4"], ["train.py", "--batch-size", "32", "--workers", "4"]),
    ],
)
def test_redact_argv(argv, expected):
    assert redact_argv(argv) == expected


def test_redact_text_hides_credentials_and_keeps_ordinary_words():
    text = f"token={HF} url=https://user:s3cret@example.org/x step=5 tokens_per_s=1000 max_tokens=64"
    assert redact_text(text) == (
        f"token={REDACTED} url=https://user:{REDACTED}@example.org/x step=5 tokens_per_s=1000 max_tokens=64"
    )


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("HF_TOKEN", True),
        ("--api-key", True),
        ("WANDB_API_KEY", True),
        ("db.password", True),
        ("AWS_SECRET", True),
        ("tokens_per_s", False),
        ("max_tokens", False),
        ("tokenizer", False),
        ("key_frames", False),
        ("lr", False),
    ],
)
def test_secret_names(name, secret):
    from hangwatch.redact import is_secret_name

    assert is_secret_name(name.lstrip("-")) is secret
