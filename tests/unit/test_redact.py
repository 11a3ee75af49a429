"""Secrets never reach a file or a message.

Here the tests that start no process; those that do are in tests/e2e/test_redact.py.
"""

from __future__ import annotations

import time

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


def test_an_event_whose_command_has_a_token_stays_one_whole_json_line(tmp_path):
    """events.jsonl was redacted as text: `"--token=***"` took the closing quote and every field after it, and the
    `start` line of such a run no longer parsed (`hangwatch report` left it out). Each string is redacted now."""
    import json

    from hangwatch.records.run import EventKind
    from hangwatch.redact import redact_argv
    from hangwatch.supervise.books.rundir import RunDir

    rd = RunDir(tmp_path)
    rd.event(EventKind.START, command=redact_argv(["python", "train.py", "--token=abc123secret"]), on_hang="kill")
    rd.event(EventKind.INCIDENT, why="HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 was rejected", attempt=1)
    rd.close()
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["command"] == ["python", "train.py", "--token=***"] and first["on_hang"] == "kill"
    assert "hf_abcdef" not in lines[1] and second["attempt"] == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("--token=abc", "--token=" + REDACTED),
        ("9token=abc", "9token=" + REDACTED),
        ("a" * 300 + "_TOKEN=abc", "a" * 300 + "_TOKEN=" + REDACTED),
        ("git+https://me:tok@github.com/x", f"git+https://me:{REDACTED}@github.com/x"),
        ("1https://u:pw@h", f"1https://u:{REDACTED}@h"),
        ("with lock: step=5", "with lock: step=5"),
    ],
)
def test_a_name_or_a_scheme_is_read_as_a_whole_run(text, expected):
    assert redact_text(text) == expected


def test_a_long_output_line_is_redacted_in_linear_time():
    """The look redacts the job's last 64 KiB of output while the pump waits for the interpreter: a 20 KB word took
    11 s (every start of the run tried against the rest of it), and the job, its output pipe full, waited too. Timed in
    the thread's CPU time: under the whole suite on 2 cores a linear pass took 0.66 s of wall time once."""
    secret = f" HF_TOKEN={HF} "
    for unit in ("x", "a.", "a1", "a_", "-a", "a:", "a=", " ", "ab12"):
        text = unit * (65536 // len(unit)) + secret
        t0 = time.thread_time()  # (CPU time: the suite's other workers on the same cores do not count)
        out = redact_text(text)
        assert time.thread_time() - t0 < 0.5, unit
        assert HF not in out
