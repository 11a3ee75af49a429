"""The house a newcomer reads: one catalogue of causes, docs generated from the code, a README whose
links resolve, `run --help` grouped, and the library face on a real stuck job."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click.testing
import pytest
from conftest import marker

from hangwatch.causes import CATALOGUE, Cause

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "hangwatch"


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


def test_no_cause_id_is_spelled_as_a_string_outside_the_catalogue() -> None:
    ids = "|".join(re.escape(c.value) for c in Cause if c != Cause.UNKNOWN)  # "unknown" is other vocabularies' word too
    literal = re.compile(rf"""(["'])({ids})\1""")
    found = [
        f"{p.relative_to(SRC)}:{n}"
        for p in SRC.rglob("*.py")
        if p.name != "causes.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert not found, found


def test_readme_is_short_and_every_link_resolves() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 160
    assert "python -m pytest" in readme  # the test command CI runs
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            assert (page.parent / target).exists(), f"{page.name}: {target}"


def test_run_help_groups_every_option_under_a_heading() -> None:
    from hangwatch.commands.run import SECTIONS, run

    out = click.testing.CliRunner().invoke(run, ["--help"]).output
    heads = [t for t, _ in SECTIONS]
    assert [h for h in heads if f"\n{h}:\n" in out] == heads
    named = {n for _, names in SECTIONS for n in names}
    options = {p.opts[0] for p in run.params if isinstance(p, click.Option)}
    assert options == named  # every option has its heading; the headings name nothing that is gone


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
