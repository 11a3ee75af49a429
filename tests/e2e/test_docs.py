"""The house a newcomer reads: one catalogue of causes, docs generated from the code, a README whose
links resolve, `run --help` grouped, and the library face on a real stuck job.

Here the tests that start real processes; those that start none are in tests/unit/test_docs.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import marker

from hangwatch.causes import CATALOGUE, Cause

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
def test_every_cause_has_its_entry_and_the_generated_pages_are_current() -> None:
    assert set(CATALOGUE) == set(Cause)
    for cause, info in CATALOGUE.items():
        assert info.meaning and info.fix, cause
    r = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    page = (ROOT / "docs" / "causes.md").read_text()
    assert all(f"| `{c}` |" in page for c in Cause)


@pytest.mark.e2e
def test_the_library_face_inspects_a_real_stuck_job(start_job, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import hangwatch

    job = start_job("deadlock.py")
    incident = hangwatch.inspect_pid(job.pid, window=1.5)
    root = incident.root_cause
    assert incident.verdict.value == "hung" and root is not None
    assert root.cause == Cause.CODE_DEADLOCK and isinstance(root.cause, Cause)
    lines = {marker("deadlock.py", f"HANG-HERE:{t}")[1] for t in ("saver", "logger")}
    assert root.where is not None and root.where.line in lines
    (tmp_path / "incident.json").write_text(incident.to_json())
    assert hangwatch.read_incident(tmp_path).to_dict() == incident.to_dict()  # what the CLI writes reads back


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["inspect_pid", "read_run", "list_runs", "read_incident"])
def test_importing_hangwatch_stays_light(name: str) -> None:
    code = (
        "import sys, hangwatch; assert 'psutil' not in sys.modules and 'click' not in sys.modules; "
        f"f = hangwatch.{name}; assert callable(f); print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "ok", r.stderr
