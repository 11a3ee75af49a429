"""One exception root. Every user-facing error says what happened and what to do."""

from __future__ import annotations


class HangwatchError(Exception):
    """Base of every error hangwatch reports to a user.

    ``message`` says what happened, ``fix`` says what to do; ``str()`` joins them as the one
    line the CLI prints.
    """

    exit_code = 1

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message, fix)
        self.message = message.rstrip(".")
        self.fix = fix.rstrip(".")

    def __str__(self) -> str:
        return f"{self.message}. {self.fix}."


class UsageError(HangwatchError):
    """The command line or input is wrong; nothing was done."""

    exit_code = 2


class CaptureError(HangwatchError):
    """Nothing of the target could be captured."""

    exit_code = 2
