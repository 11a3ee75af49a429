"""`hangwatch doctor`'s result: one record per check (``hangwatch.doctor/1``, docs/probe-doctor.md)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from hangwatch.records.values import frozen

SCHEMA = "hangwatch.doctor/1"


class CheckStatus(str, Enum):
    """A check's outcome."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@frozen
class Check:
    """One preflight check: what was measured, what it means, and the fix."""

    id: str
    status: CheckStatus
    value: str
    summary: str
    fix: str

    def to_dict(self) -> dict[str, Any]:
        """The check as its JSON object."""
        return {
            "id": self.id,
            "status": self.status.value,
            "value": self.value,
            "summary": self.summary,
            "fix": self.fix,
        }


def doctor_json(checks: list[Check]) -> dict[str, Any]:
    """``hangwatch.doctor/1``: every check."""
    return {"schema": SCHEMA, "checks": [c.to_dict() for c in checks]}
