"""Keep secrets out of every file and message.

Arguments and ``KEY=value`` pairs whose name looks like a credential have their value replaced;
free text has well-known token shapes replaced. Applied at capture time, so evidence never
holds a secret in the first place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "***"

# Names of options or variables whose value is a credential, matched on the name's parts
# (split at _ - .): HF_TOKEN, --api-key, db.password; not tokens_per_s, max_tokens, tokenizer.
_SECRET_PARTS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "token",
        "apikey",
        "auth",
        "credential",
        "credentials",
        "bearer",
        "cookie",
        "signature",
        "passphrase",
    }
)
_SECRET_LAST_PARTS = frozenset({"key"})  # api_key, access_key, WANDB_API_KEY; not key_frames
_NAME_SPLIT = re.compile(r"[_.\-]+")
# Token shapes of common services (Hugging Face, OpenAI, GitHub, AWS, Slack, W&B-like hex keys).
_TOKEN_SHAPES = re.compile(
    r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|[a-f0-9]{40})\b"
)
# Each pattern is linear in its text (a job's output line can be 64 KiB with no space): a name or a scheme is a
# whole run of its characters, tried once from the run's start (a plain ``[A-Za-z_][A-Za-z0-9_.-]*`` tried every
# start of a run against the rest of it: 11 s on one 20 KB word, blocking the output pump meanwhile). An assignment's
# value is read only after a secret's name, so a name that is not one (``0:`` of srun --label, ``10.0.0.1:`` of
# pdsh) never swallows the assignment after it: ``0: DB_PASSWORD=hunter2``.
_ASSIGNMENT = re.compile(r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z0-9_.-]+)(?P<sep>\s*[=:]\s*)")
_VALUE = re.compile(r"\"[^\"]*\"|'[^']*'|\S+")
_URL_CREDENTIALS = re.compile(r"(?<![a-z0-9+.-])(?P<scheme>[a-z0-9+.-]+://)(?P<user>[^:/@\s]+):(?P<pw>[^@/\s]+)@")


def is_secret_name(name: str) -> bool:
    """Whether an environment or option name looks like it holds a secret."""
    parts = [x for x in (p.lstrip("0123456789") for p in _NAME_SPLIT.split(name.lower())) if x]  # 9token: token
    return bool(parts) and (any(x in _SECRET_PARTS for x in parts) or parts[-1] in _SECRET_LAST_PARTS)


def redact_text(text: str) -> str:
    """Replace credential values and token shapes in free text."""

    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{m.group('user')}:{REDACTED}@", text)
    out: list[str] = []
    pos = 0
    for m in _ASSIGNMENT.finditer(text):
        if m.start() < pos or not is_secret_name(m.group("name")):
            continue  # (inside a value already hidden)
        value = _VALUE.match(text, m.end())
        if value is not None:
            out.append(text[pos : m.end()] + REDACTED)
            pos = value.end()
    text = "".join(out) + text[pos:]
    return _TOKEN_SHAPES.sub(REDACTED, text)


def redact_json(value: Any) -> Any:
    """A JSON value with each of its strings redacted (never the text of its encoding: a value that ends an
    assignment, ``--token=***``, would take the closing quote and the fields after it with it)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    return value


def redact_argv(argv: Iterable[str]) -> list[str]:
    """Redact a command line: ``--token X``, ``--api-key=X``, ``PASSWORD=X`` and token shapes."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        if arg.startswith("-") and "=" not in arg and is_secret_name(arg.lstrip("-")):
            out.append(arg)
            hide_next = True
            continue
        out.append(redact_text(arg))
    return out
