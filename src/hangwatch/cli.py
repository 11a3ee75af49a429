"""Command line. Thin: parse, call the library, render, choose the exit code."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from hangwatch import __version__
from hangwatch.errors import HangwatchError

MAX_WINDOW_S = 600.0


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hangwatch")
def cli() -> None:
    """hangwatch: notice, explain and recover hung ML training jobs."""


@cli.command()
@click.argument("pid", type=click.IntRange(min=1))
@click.option("--window", type=click.FloatRange(min=0.2, max=MAX_WINDOW_S), default=5.0, show_default=True,
              help="Seconds to sample the job for.")
@click.option("--json", "as_json", is_flag=True, help="Print one incident object (hangwatch.incident/1).")
@click.option("--evidence", "evidence_path", type=click.Path(dir_okay=False, writable=True),
              help="Also write the raw samples (hangwatch.evidence/1 JSON) to this file, for a bug report.")
def inspect(pid: int, window: float, as_json: bool, evidence_path: str | None) -> None:
    """Sample the job that PID belongs to and say whether it is hung, where, and why."""
    from hangwatch.inspect_job import inspect_pid
    from hangwatch.report.text import render_text

    incident = inspect_pid(pid, window, evidence_path=evidence_path)
    if as_json:
        click.echo(incident.to_json())
        for note in incident.notes:  # the text report prints its notes itself
            click.echo(f"hangwatch: {note}", err=True)
    else:
        render_text(incident, sys.stdout, color=None)


@cli.command(context_settings={"allow_interspersed_args": False})
@click.option("--run-dir", help="Where the log, incidents and summary go [default: hangwatch-runs/<UTC time>-<cmd>].")
@click.option("--min-stall", help="No stall is declared before this many seconds without progress [120].")
@click.option("--startup-grace", help="Seconds allowed before the first progress signal [900].")
@click.option("--on-hang", help="report | kill | restart [report].")
@click.option("--max-restarts", help="Restarts allowed in one run [3].")
@click.option("--fallback", multiple=True, help="Repeatable: restart k applies fallbacks 1..k to the command.")
@click.option("--progress-regex", help="Extra progress pattern; named group `step` for a counter.")
@click.option("--cost-per-hour", help="Price of the machine in USD, for cost and waste figures.")
@click.option("--kill-grace", help="Seconds between SIGTERM and SIGKILL when ending the job [30].")
@click.option("--notify", multiple=True, help="Repeatable: an apprise URL to send incidents to.")
@click.option("--restart-on-crash", is_flag=True, default=None, help="Restart a job that exits with an error.")
@click.option("--capture-window", help="Seconds to sample a suspect job [min-stall/4, within 1..5].")
@click.option("--max-slow", help="Total extra seconds given to a job that is slow but alive [1800].")
@click.option("--coord", help="Multi-node: HOST:PORT of the coordination store [master port + 1 of node 0].")
@click.option("--node-rank", help="Multi-node: this node's rank [from torchrun's --node-rank].")
@click.option("--nodes", help="Multi-node: number of nodes [from torchrun's --nnodes].")
@click.option("--config", "config_path", help="Settings in TOML [hangwatch.toml if present].")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(command: tuple[str, ...], config_path: str | None, **options: object) -> int:
    """Supervise a job: hangwatch run [OPTIONS] -- CMD [ARGS]..."""
    from hangwatch.supervise.config import build_config
    from hangwatch.supervise.supervisor import Supervisor

    cfg = build_config(list(command), options, config_path, use_pty=sys.stdout.isatty())
    return Supervisor(cfg).run()


@cli.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def report(run_dir: Path) -> None:
    """Render a run's summary, timeline and incidents (a directory made by `hangwatch run`)."""
    from hangwatch.report.run_report import load_run, render_run

    render_run(*load_run(run_dir), sys.stdout)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print hangwatch.doctor/1 JSON.")
@click.option("--checkpoint-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Where checkpoints go (free space, network filesystem).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Where the data is read from.")
@click.option("--shm", type=click.Path(file_okay=False, path_type=Path), default=Path("/dev/shm"),  # noqa: S108
              show_default=True,
              help="The shared-memory filesystem DataLoader workers use.")
@click.option("--workers", type=click.IntRange(min=0), help="DataLoader workers the job will use.")
@click.option("--batch-mib", type=click.FloatRange(min=0), help="Size of one batch in MiB (with --workers: shm need).")
def doctor(as_json: bool, checkpoint_dir: Path, data_dir: Path | None, shm: Path, workers: int | None,
           batch_mib: float | None) -> int:
    """Preflight: environment hazards known to hang training, each with its fix. Exit 1 if any check fails."""
    import json

    from hangwatch.probe.doctor import DoctorInputs, run_checks, to_json
    from hangwatch.report.doctor_text import render_doctor

    checks = run_checks(DoctorInputs(env=dict(os.environ), shm=shm, checkpoint_dir=checkpoint_dir,
                                     data_dir=data_dir, workers=workers, batch_mib=batch_mib))
    if as_json:
        click.echo(json.dumps(to_json(checks), indent=2))
    else:
        render_doctor(checks, sys.stdout)
    return 1 if any(c.status == "fail" for c in checks) else 0


def _csv(kind: type, name: str, value: str) -> tuple:  # type: ignore[type-arg]
    try:
        items = tuple(kind(x.strip()) for x in value.split(",") if x.strip())
    except ValueError as e:
        raise click.BadParameter(f"{value!r} is not a comma-separated list", param_hint=name) from e
    if not items:
        raise click.BadParameter("empty list", param_hint=name)
    return items


@cli.command("probe-data")
@click.argument("target")
@click.option("--batch-size", type=click.IntRange(min=1), help="Batch size [the target's, else 8].")
@click.option("--samples", type=click.IntRange(min=1), default=200, show_default=True, help="Items to read and use.")
@click.option("--item-timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Seconds an item (or a cell's next batch) may take before it counts as hung.")
@click.option("--cell-timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds one DataLoader configuration may take in all.")
@click.option("--workers", default="2,4", show_default=True, help="Worker counts to try (0 is always the baseline).")
@click.option("--contexts", default="fork,spawn", show_default=True, help="Start methods: fork,spawn,forkserver.")
@click.option("--epochs", type=click.IntRange(min=1), default=2, show_default=True,
              help="Epochs per configuration (epoch boundaries hang too).")
@click.option("--json", "as_json", is_flag=True, help="Print hangwatch.probe/1 JSON.")
def probe_data(target: str, batch_size: int | None, samples: int, item_timeout: float, cell_timeout: float,
               workers: str, contexts: str, epochs: int, as_json: bool) -> int:
    """Find the fastest DataLoader settings that do not hang. TARGET: pkg.module:function or file.py:function."""
    import json

    from hangwatch.probe.matrix import ProbeOptions, probe
    from hangwatch.report.probe_text import probe_view, render_probe

    ctxs = _csv(str, "--contexts", contexts)
    bad = [c for c in ctxs if c not in ("fork", "spawn", "forkserver")]
    if bad:
        raise click.BadParameter(f"unknown start method(s) {bad}", param_hint="--contexts")
    opts = ProbeOptions(batch_size=batch_size, samples=samples, item_timeout=item_timeout, cell_timeout=cell_timeout,
                        workers=_csv(int, "--workers", workers), contexts=ctxs, epochs=epochs)
    if as_json or not sys.stdout.isatty():
        result = probe(target, opts)
    else:
        from rich.live import Live

        with Live(refresh_per_second=4, transient=True) as live:
            result = probe(target, opts, on_update=lambda r: live.update(probe_view(r)))
    if as_json:
        click.echo(json.dumps(result.to_json(batch_size or 8), indent=2))
    else:
        render_probe(result, sys.stdout)
    return 0 if result.recommendation() is not None else 1


def main(argv: list[str] | None = None) -> int:
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
