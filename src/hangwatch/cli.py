"""Command line. Thin: the group, the commands (one module each in ``commands/``), and ``main()``,
the one place that prints errors and chooses exit codes."""

from __future__ import annotations

import os
import sys

import click

from hangwatch import __version__
from hangwatch.commands.doctor import doctor
from hangwatch.commands.inspect import inspect
from hangwatch.commands.probe_data import probe_data
from hangwatch.commands.report import report
from hangwatch.commands.run import run
from hangwatch.errors import HangwatchError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hangwatch")
def cli() -> None:
    """hangwatch: notice, explain and recover hung ML training jobs."""


for _command in (inspect, run, report, doctor, probe_data):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; the exit status."""
    try:
        rv = cli.main(args=argv, prog_name="hangwatch", standalone_mode=False)
        if isinstance(rv, int):
            return rv
    except click.exceptions.Abort:
        click.echo("hangwatch: interrupted.", err=True)
        return 130
    except click.ClickException as e:
        msg = e.format_message().rstrip(".")
        click.echo(f"hangwatch: {msg}. Run `hangwatch --help` for usage.", err=True)
        return 2 if isinstance(e, click.UsageError | click.BadParameter) else e.exit_code
    except HangwatchError as e:
        click.echo(f"hangwatch: {e}", err=True)
        return e.exit_code
    except KeyboardInterrupt:
        click.echo("hangwatch: interrupted.", err=True)
        return 130
    except Exception as e:  # the one place an unexpected error becomes a message and an exit code
        if os.environ.get("HANGWATCH_DEBUG"):
            raise
        click.echo(f"hangwatch: internal error ({type(e).__name__}: {e}). Run again with HANGWATCH_DEBUG=1 for "
                   "the traceback, and report it.", err=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
