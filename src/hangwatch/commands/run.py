"""`hangwatch run -- CMD`: supervise a job."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from hangwatch.supervise.options import OPTIONS, SECTIONS, Option


class GroupedCommand(click.Command):
    """A command whose --help lists its options under their sections' headings (the rest under "Other")."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The options, by section."""
        rows: dict[str, tuple[str, str]] = {}
        for param in self.get_params(ctx):
            rec = param.get_help_record(ctx)
            if rec is not None and isinstance(param, click.Option):
                rows[param.opts[0]] = rec
        placed: set[str] = set()
        for title, names in SECTIONS:
            with formatter.section(title):
                formatter.write_dl([rows[n] for n in names if n in rows])
            placed.update(names)
        rest = [r for n, r in rows.items() if n not in placed]
        if rest:
            with formatter.section("Other"):
                formatter.write_dl(rest)


def _click_option(o: Option) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of one setting of the table."""
    if o.kind == "switch":
        return click.option(f"{o.flag}/--no-{o.flag[2:]}", o.name, default=None, help=o.help_text())
    if o.kind == "flag":
        return click.option(o.flag, o.name, is_flag=True, default=None, help=o.help_text())
    multiple = o.kind == "many" or o.name == "fallback"
    return click.option(o.flag, o.name, multiple=multiple, help=o.help_text())


def _with_options(f: Callable[..., Any]) -> Callable[..., Any]:
    for o in reversed(OPTIONS):  # applied bottom-up: --help lists them in the table's order
        if o.cli:
            f = _click_option(o)(f)
    return f


@click.command(cls=GroupedCommand, context_settings={"allow_interspersed_args": False})
@_with_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(command: tuple[str, ...], config: str | None, **options: object) -> int:
    """Supervise a job: hangwatch run [OPTIONS] -- CMD [ARGS]..."""
    from hangwatch.supervise.config import build_config
    from hangwatch.supervise.supervisor import Supervisor

    cfg = build_config(list(command), options, config, use_pty=sys.stdout.isatty())
    return Supervisor(cfg).run()
