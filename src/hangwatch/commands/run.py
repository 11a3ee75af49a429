"""`hangwatch run -- CMD`: supervise a job."""

from __future__ import annotations

import sys

import click

from hangwatch.supervise.config import default_text

# `run --help` shows its options under these headings, in this order (the docs' run page follows them).
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Detection",
        (
            "--min-stall",
            "--startup-grace",
            "--progress-regex",
            "--capture-window",
            "--max-slow",
            "--history-factor",
            "--history-floor",
            "--phase-factor",
            "--rendezvous-timeout",
            "--native",
            "--autobeat",
            "--flight-recorder",
        ),
    ),
    (
        "Recovery",
        (
            "--on-hang",
            "--max-restarts",
            "--fallback",
            "--resume-arg",
            "--auto-fallback",
            "--restart-on-crash",
            "--kill-grace",
            "--gpu-release-timeout",
            "--relaunch-on-held-gpu",
        ),
    ),
    ("Cost and deadline", ("--cost-per-hour", "--budget", "--on-over-budget", "--deadline", "--total-steps")),
    (
        "Clusters",
        ("--coord", "--node-rank", "--nodes", "--coord-token", "--metrics-port", "--metrics-textfile", "--run-label"),
    ),
    ("Output", ("--run-dir", "--notify", "--log-max-size", "--log-keep", "--config")),
)


class GroupedCommand(click.Command):
    """A command whose --help lists its options under SECTIONS' headings (the rest under "Other")."""

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


@click.command(cls=GroupedCommand, context_settings={"allow_interspersed_args": False})
@click.option("--run-dir", help="Where the log, incidents and summary go [default: hangwatch-runs/<UTC time>-<cmd>].")
@click.option(
    "--min-stall", help=f"No stall is declared before this many seconds without progress {default_text('min_stall')}."
)
@click.option(
    "--startup-grace", help=f"Seconds allowed before the first progress signal {default_text('startup_grace')}."
)
@click.option("--on-hang", help=f"report | kill | restart {default_text('on_hang')}.")
@click.option("--max-restarts", help=f"Restarts allowed in one run {default_text('max_restarts')}.")
@click.option("--fallback", multiple=True, help="Repeatable: restart k applies fallbacks 1..k to the command.")
@click.option(
    "--resume-arg",
    help="Options every restart gets, with the newest checkpoint autobeat saw: "
    "'--resume {checkpoint}' ({checkpoint_step} too; also usable in --fallback and its env).",
)
@click.option("--progress-regex", help="Extra progress pattern; named group `step` for a counter.")
@click.option("--cost-per-hour", help="Price of the machine in USD, for cost and waste figures.")
@click.option("--budget", help="USD: warn once when the projected total cost passes it (needs --cost-per-hour).")
@click.option(
    "--on-over-budget",
    help=f"warn | stop: stop ends the job cleanly, after its next checkpoint when "
    f"one was seen {default_text('on_over_budget')}.",
)
@click.option(
    "--deadline",
    help="When the run must be done: +36h, +2d12h, or an ISO time (2026-11-26T18:00). "
    "The projected finish is shown against it, with a warning when it crosses it.",
)
@click.option(
    "--total-steps", help="Steps the job will run, for the ETA [the job's n/N counter, or the trainer's max steps]."
)
@click.option(
    "--kill-grace", help=f"Seconds between SIGTERM and SIGKILL when ending the job {default_text('kill_grace')}."
)
@click.option(
    "--gpu-release-timeout",
    help="Before a restart, seconds to wait for the ended job's GPU memory to be "
    f"freed {default_text('gpu_release_timeout')}.",
)
@click.option(
    "--relaunch-on-held-gpu",
    is_flag=True,
    default=None,
    help="Restart even when the ended job's GPU memory stays held (usually a certain OOM).",
)
@click.option("--notify", multiple=True, help="Repeatable: an apprise URL to send incidents to.")
@click.option("--restart-on-crash", is_flag=True, default=None, help="Restart a job that exits with an error.")
@click.option(
    "--auto-fallback",
    help="on | off: when --fallback is used up, the root cause picks the restart's "
    f"remedy (spawn, num_workers=0, ...) {default_text('auto_fallback')}.",
)
@click.option(
    "--native",
    is_flag=True,
    default=None,
    help="Read native (C/C++) frames in every capture (slower; automatic where Python says nothing).",
)
@click.option(
    "--autobeat/--no-autobeat",
    default=None,
    help="Make torch jobs beat on each optimizer step and DataLoader batch, through a startup hook "
    "on the job's PYTHONPATH [on].",
)
@click.option(
    "--flight-recorder/--no-flight-recorder",
    default=None,
    help="Turn on torch's flight recorder (TORCH_FR_BUFFER_SIZE, unless set) and read every rank's "
    "collectives at a stall through torch's worker server on a unix socket [on].",
)
@click.option("--capture-window", help="Seconds to sample a suspect job [min-stall/4, within 1..5].")
@click.option(
    "--max-slow", help=f"Total extra seconds given to a job that is slow but alive {default_text('max_slow')}."
)
@click.option(
    "--history-factor",
    help="An alive job with no progress is hung after this many times its median "
    f"progress interval (a DataLoader worker's batch: times its workers) {default_text('history_factor')}.",
)
@click.option(
    "--history-floor", help=f"...but never before this many seconds without progress {default_text('history_floor')}."
)
@click.option(
    "--phase-factor",
    help="A phase (checkpoint, validation) is hung after this many times the longest "
    f"earlier phase of its name {default_text('phase_factor')}.",
)
@click.option(
    "--rendezvous-timeout",
    help="Seconds ranks or nodes may wait for peers at process-group setup "
    f"before the job is hung (reported as waiting before that) {default_text('rendezvous_timeout')}.",
)
@click.option("--coord", help="Multi-node: HOST:PORT of the coordination store [master port + 1 of node 0].")
@click.option("--node-rank", help="Multi-node: this node's rank [from torchrun's --node-rank].")
@click.option("--nodes", help="Multi-node: number of nodes [from torchrun's --nnodes].")
@click.option(
    "--coord-token",
    help="Multi-node: the secret all nodes' hangwatches share [$HANGWATCH_COORD_TOKEN, "
    "else Slurm's job id, torchrun's --rdzv-id, or the command line].",
)
@click.option(
    "--metrics-port",
    help="Serve Prometheus metrics on this port at /metrics (needs the `metrics` extra; 0: any free port).",
)
@click.option(
    "--metrics-textfile",
    help="Write the same metrics to this file (atomically), for node_exporter's textfile collector.",
)
@click.option("--run-label", help="The `run` label of the metrics [the run directory's name].")
@click.option("--log-max-size", help="Rotate output.log at this size (bytes, or 500M, 2G): output.log.1, ... [never].")
@click.option("--log-keep", help=f"Rotated output.log files kept {default_text('log_keep')}.")
@click.option("--config", "config_path", help="Settings in TOML [hangwatch.toml if present].")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(command: tuple[str, ...], config_path: str | None, **options: object) -> int:
    """Supervise a job: hangwatch run [OPTIONS] -- CMD [ARGS]..."""
    from hangwatch.supervise.config import build_config
    from hangwatch.supervise.supervisor import Supervisor

    cfg = build_config(list(command), options, config_path, use_pty=sys.stdout.isatty())
    return Supervisor(cfg).run()
