"""The option table (supervise/options.py) is the one place a setting of `hangwatch run` is declared: the
click options, the TOML keys, RunConfig's defaults and docs/options.md all come from it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import click
import pytest

from hangwatch.commands.run import run
from hangwatch.errors import UsageError
from hangwatch.supervise.config import RunConfig, build_config
from hangwatch.supervise.options import DEFAULTS, OPTIONS, SECTIONS, Option, settings_source
from hangwatch.supervise.settings import Settings

SRC = Path(__file__).resolve().parents[2] / "src" / "hangwatch"
CMD = ["python", "-c", "pass"]


def test_every_option_is_a_flag_of_run_and_every_flag_an_option():
    flags = {p.name for p in run.params if isinstance(p, click.Option) and p.name != "help"}
    assert flags == {o.name for o in OPTIONS if o.cli}
    listed = [f for _, names in SECTIONS for f in names]
    assert sorted(listed) == sorted(o.flag for o in OPTIONS if o.cli) and len(set(listed)) == len(listed)


def test_run_config_takes_its_defaults_from_the_table():
    fields = {f.name: f for f in dataclasses.fields(RunConfig)}
    for o in OPTIONS:
        if not o.field:
            continue
        assert o.name in fields, o.name
        f = fields[o.name]
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        assert getattr(default, "value", default) == o.default, o.name
    cfg = build_config(CMD, {}, None, use_pty=False)
    for o in OPTIONS:
        if o.field and o.kind != "custom" and o.default is not None:
            assert getattr(getattr(cfg, o.name), "value", getattr(cfg, o.name)) == o.default, o.name


def test_run_configs_settings_are_generated_from_the_table():
    """[3/5]: each option's name and type is written once, in the table; RunConfig's settings are generated from
    it (supervise/settings.py, by docs/gen.py), so a new option is a new field, typed by its kind."""
    assert (SRC / "supervise" / "settings.py").read_text() == settings_source(), "run `python docs/gen.py`"
    settings = {f.name: f.type for f in dataclasses.fields(Settings)}
    assert settings == {o.name: o.annotation() for o in OPTIONS if o.field}
    held = {f.name for f in dataclasses.fields(RunConfig)} - set(settings)
    assert held == {"argv", "run_dir", "fallbacks", "stop_over_budget", "use_pty", "topology", "blind"}
    typed = {o.name: o.annotation() for o in OPTIONS if o.field}
    assert typed["capture_window"] == "float | None" and typed["max_restarts"] == "int"
    assert typed["notify"] == "tuple[str, ...]" and typed["metrics_textfile"] == "Path | None"
    with pytest.raises(ValueError, match="needs its type"):
        Option("x", "Detection", "a custom kind RunConfig would hold", "custom")


def test_no_default_is_spelled_outside_the_table():
    """A default copied by hand drifts (config.py once held `log_keep: int = 5` beside the table's 5)."""
    copied = re.compile(r"^\s+(\w+): [^=]+= (?!DEFAULTS\[|field\()(.+)$")
    names = {o.name for o in OPTIONS}
    for path in (SRC / "supervise" / "config.py", SRC / "supervise" / "settings.py"):
        text = path.read_text()
        body = text[text.index("@frozen") :]
        spelled = [m.group(1) for line in body.splitlines() if (m := copied.match(line)) and m.group(1) in names]
        assert spelled == [], (path.name, spelled)


@pytest.mark.parametrize("o", [o for o in OPTIONS if o.toml and o.kind not in ("custom", "many")], ids=lambda o: o.name)
def test_each_toml_key_is_read_and_checked_by_its_kind(tmp_path, o):
    good = {
        "number": "7.5",
        "count": "4",
        "choice": f'"{o.choices[-1]}"' if o.choices else "",
        "flag": "true",
        "switch": "false",
        "on_off": '"off"',
        "text": '"x"',
        "path": '"some/where"',
        "size": '"2M"',
        "port": "9109",
    }[o.kind]
    toml = tmp_path / "hw.toml"
    extra = "cost_per_hour = 1\n" if o.name == "budget" else ""
    toml.write_text(f"{o.name} = {good}\n{extra}")
    cfg = build_config(CMD, {}, str(toml), use_pty=False)
    if o.field:
        assert getattr(cfg, o.name) != o.default, (o.name, getattr(cfg, o.name))
    if o.kind in ("flag", "switch", "on_off"):
        toml.write_text(f'{o.name} = "maybe"\n')
        with pytest.raises(UsageError, match=re.escape(f"{o.flag} must be on or off")):
            build_config(CMD, {}, str(toml), use_pty=False)


def test_a_misspelt_kind_is_refused_where_the_table_is_declared():
    from hangwatch.supervise.options import Option

    with pytest.raises(ValueError, match="unknown kind 'numbr'"):
        Option("min_stall", "Detection", "x", "numbr")


def test_a_flag_written_as_the_string_false_in_toml_is_off(tmp_path):
    """bool("false") is True: a flag read without its kind's check turned on what the file turned off."""
    toml = tmp_path / "hw.toml"
    toml.write_text('restart_on_crash = "false"\nnative = "no"\n')
    cfg = build_config(CMD, {}, str(toml), use_pty=False)
    assert (cfg.restart_on_crash, cfg.native) == (False, False)


def test_bad_choice_names_the_choices():
    with pytest.raises(UsageError, match=re.escape("--on-over-budget must be warn or stop, not 'later'")):
        build_config(CMD, {"on_over_budget": "later", "cost_per_hour": "1"}, None, use_pty=False)


def test_run_help_shows_each_default_from_the_table():
    from click.testing import CliRunner

    out = CliRunner().invoke(run, ["--help"], terminal_width=200).output
    flat = " ".join(out.split())
    for o in OPTIONS:
        if o.cli and o.default_text():
            assert f"[{o.default_text()}]" in flat.replace("- ", "-"), o.name
    assert DEFAULTS["min_stall"] == 120.0 and "[120]" in flat
