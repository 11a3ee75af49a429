"""Apply restart fallbacks to a command: restart k applies fallbacks 1..k cumulatively.

An option already present is replaced (``--workers 2`` becomes ``--workers 0``), a new one is
appended. ``--name value``, ``--name=value`` and bare flags are understood.
"""

from __future__ import annotations

import shlex


def _options(tokens: list[str]) -> list[tuple[str, str | None, bool]]:
    """(name, value, used '=' form) for each option in a fallback's tokens."""
    out: list[tuple[str, str | None, bool]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("-"):
            raise ValueError(f"fallback token {tok!r} is not an option (expected --name [value])")
        if "=" in tok:
            name, value = tok.split("=", 1)
            out.append((name, value, True))
            i += 1
        elif i + 1 < len(tokens) and not _is_option(tokens[i + 1]):
            out.append((tok, tokens[i + 1], False))
            i += 2
        else:
            out.append((tok, None, False))
            i += 1
    return out


def _is_option(tok: str) -> bool:
    return tok.startswith("-") and not _is_number(tok)


def _is_number(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def parse_fallback(text: str) -> list[tuple[str, str | None, bool]]:
    """The options of a fallback string; ValueError when it is not a list of options."""
    return _options(shlex.split(text))


def apply_fallback(argv: list[str], text: str) -> list[str]:
    """``argv`` with one fallback applied."""
    out = list(argv)
    for name, value, eq in parse_fallback(text):
        for i, tok in enumerate(out):
            if tok == name:
                has_value = i + 1 < len(out) and not _is_option(out[i + 1])
                if value is None:
                    if has_value:
                        del out[i + 1]
                elif has_value:
                    out[i + 1] = value
                else:
                    out.insert(i + 1, value)
                break
            if tok.startswith(name + "="):
                out[i] = name if value is None else f"{name}={value}"
                break
        else:
            if value is None:
                out.append(name)
            elif eq:
                out.append(f"{name}={value}")
            else:
                out.extend([name, value])
    return out


def command_for_attempt(argv: list[str], fallbacks: list[str], attempt: int) -> list[str]:
    """Attempt 1 runs ``argv``; attempt k+1 (restart k) applies fallbacks 1..k."""
    out = list(argv)
    for text in fallbacks[: max(0, attempt - 1)]:
        out = apply_fallback(out, text)
    return out
