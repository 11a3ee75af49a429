"""The contract lives in the repository: the reference page is generated from the code and current, every
environment variable the code reads or sets is on it, every page a comment cites exists (with its section), and
every command the README shows answers --help."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from hangwatch.cli import cli
from hangwatch.envvars import ENVIRONMENT
from hangwatch.records import layout

ROOT = Path(__file__).resolve().parents[2]
CODE = [p for d in ("src", "tests", "bench", "examples") for p in (ROOT / d).rglob("*.py") if "fixtures" not in p.parts]
CITED = re.compile(r"(?<![\w/.-])((?:docs/)?[\w./-]*[\w-]\.md)(#[\w-]+)?")
RUN_FILES = {layout.REPORT}  # names in a run directory, not pages


def _slug(heading: str) -> str:
    """The anchor mkdocs makes of a heading (toc's slugify: lowercase, punctuation dropped, spaces to '-')."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"[\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*?)\s*$", page.read_text(), re.MULTILINE)}


def test_every_environment_variable_in_the_code_is_on_the_reference_page():
    used = {m for p in (ROOT / "src").rglob("*.py") for m in re.findall(r"HANGWATCH_[A-Z0-9_]+", p.read_text())}
    declared = {v.name for v in ENVIRONMENT}
    assert used == declared, f"in the code only: {sorted(used - declared)}; declared only: {sorted(declared - used)}"
    page = (ROOT / "docs" / "reference.md").read_text()
    assert all(f"`{v}`" in page for v in declared)


def test_every_page_a_comment_cites_is_in_the_repository_with_its_section():
    broken = []
    for path in CODE:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in CITED.finditer(line):
                name, anchor = m.group(1), m.group(2)
                if Path(name).name in RUN_FILES and not name.startswith("docs/"):
                    continue
                page = next((c for c in (ROOT / name, ROOT / "docs" / name) if c.is_file()), None)
                where = f"{path.relative_to(ROOT)}:{n}: {m.group(0)}"
                if page is None:
                    broken.append(f"{where} (no such page in the repository)")
                elif anchor and anchor[1:] not in _anchors(page):
                    broken.append(f"{where} (no such section)")
    assert not broken, "\n".join(broken)


def test_every_command_the_readme_shows_answers_help():
    readme = (ROOT / "README.md").read_text()
    shown = set(re.findall(r"\bhangwatch ([a-z][a-z-]+)\b", readme)) & set(cli.list_commands(None))  # type: ignore[arg-type]
    assert {"run", "inspect"} <= shown, shown
    for name in sorted(shown):
        r = CliRunner().invoke(cli, [name, "--help"])
        assert r.exit_code == 0 and "Usage: " in r.output, (name, r.output)
