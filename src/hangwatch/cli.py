"""Command line. Thin: the group, the commands (one module each in ``commands/``), and ``main()``,
the one place that prints errors and chooses exit codes."""

from __future__ import annotations

import importlib
import os
import sys
from typing import NoReturn

from hangwatch._bytecode import use_own_cache

use_own_cache()  # before the rest of the command's imports: their bytecode, where Python may not write it beside them

import click  # noqa: E402 - after the bytecode cache is chosen

from hangwatch import __version__  # noqa: E402
from hangwatch.errors import HangwatchError  # noqa: E402

# name -> (module, attribute): a command's module is imported only when that command runs (or when
# --help lists them all), so `hangwatch run` does not pay for inspect's or report's imports.
COMMANDS = {
    "inspect": ("hangwatch.commands.inspect", "inspect"),
    "run": ("hangwatch.commands.run", "run"),
    "attach": ("hangwatch.commands.attach", "attach"),
    "agent": ("hangwatch.commands.agent", "agent"),
    "report": ("hangwatch.commands.report", "report"),
    "ls": ("hangwatch.commands.ls", "ls"),
    "watch": ("hangwatch.commands.watch", "watch"),
    "doctor": ("hangwatch.commands.doctor", "doctor"),
    "probe-data": ("hangwatch.commands.probe_data", "probe_data"),
}


class LazyGroup(click.Group):
    """A click group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command, in the order of COMMANDS."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the command's module now."""
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        command = getattr(importlib.import_module(target[0]), target[1])
        assert isinstance(command, click.Command)  # noqa: S101 - COMMANDS names commands only
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hangwatch")
def cli() -> None:
    """hangwatch: notice, explain and recover hung ML training jobs."""


def _exit_now(code: int) -> NoReturn:
    """The end of the `hangwatch run` program: the run has ended its job and written and closed every
    file, so the interpreter's own teardown (freeing every module: ~30 ms here) is skipped."""
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # a closed or gone stream: the job's code still counts
            pass
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; the exit status."""
    try:
        rv = cli.main(args=argv, prog_name="hangwatch", standalone_mode=False)
        if isinstance(rv, int):
            if argv is None and sys.argv[1:2] == ["run"]:
                _exit_now(rv)
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
        click.echo(
            f"hangwatch: internal error ({type(e).__name__}: {e}). Run again with HANGWATCH_DEBUG=1 for "
            "the traceback, and report it.",
            err=True,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
