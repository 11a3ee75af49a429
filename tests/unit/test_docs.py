"""The house a newcomer reads: one catalogue of causes, docs generated from the code, a README whose
links resolve, `run --help` grouped, and the library face on a real stuck job.

Here the tests that start no process; those that do are in tests/e2e/test_docs.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import click.testing

from hangwatch.causes import Cause

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "hangwatch"


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
