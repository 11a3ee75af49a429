"""`hangwatch attach PID`: supervise a job that is already running, from now on."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import click

from hangwatch.commands.run import GroupedCommand, _click_option
from hangwatch.errors import UsageError
from hangwatch.redact import redact_argv
from hangwatch.supervise.options import BY_NAME

# The settings of `run` that mean something for a job hangwatch did not start: how a stall is judged, what a hang
# does (report or kill: never restart or heal, hangwatch cannot launch it again), what it costs, where it is written.
ATTACH_OPTIONS = (
    "min_stall",
    "startup_grace",
    "progress_regex",
    "capture_window",
    "max_slow",
    "history_factor",
    "history_floor",
    "phase_factor",
    "native",
    "on_hang",
    "kill_grace",
    "cost_per_hour",
    "metrics_port",
    "metrics_textfile",
    "run_label",
    "run_dir",
    "notify",
    "log_max_size",
    "log_keep",
    "config",
)
# What `run` does that `attach` cannot: inject the startup hook, relaunch, heal a worker through the hook.
FORCED = {"autobeat": False, "flight_recorder": False, "max_restarts": 0, "restart_on_crash": False}
ACTIONS = ("report", "kill")


# --on-hang as attach offers it: its two choices, the same default
ON_HANG = dataclasses.replace(
    BY_NAME["on_hang"], help="report (said and written, nothing done) | kill (the whole tree ended)", choices=ACTIONS
)


def _with_options(f: Callable[..., Any]) -> Callable[..., Any]:
    for name in reversed(ATTACH_OPTIONS):
        f = _click_option(ON_HANG if name == "on_hang" else BY_NAME[name])(f)
    return f


@click.command(cls=GroupedCommand)
@_with_options
@click.option("--expect-start", type=int, default=None, hidden=True)  # the agent's: the start time the pid must have
@click.option("--owner-only", is_flag=True, hidden=True)  # the agent's: read no process of another user than the job's
@click.argument("pid", type=int)
def attach(pid: int, config: str | None, expect_start: int | None, owner_only: bool, **options: object) -> int:
    """Supervise a job already running, from now on: hangwatch attach [OPTIONS] PID

    Its tree is found from PID (workers, ranks under a launcher). A hang is reported (--on-hang report, the default)
    or its whole tree ended (--on-hang kill); hangwatch did not start it, so it never restarts it. Ctrl-C detaches:
    the job runs on, untouched."""
    from hangwatch.capture import proc
    from hangwatch.supervise.config import build_config
    from hangwatch.supervise.job.attached import AttachedJob, find_target
    from hangwatch.supervise.supervisor import Supervisor

    _check_action(options.get("on_hang"))
    target = find_target(pid, expect_start)
    if owner_only:  # under the agent: its tree walks, its looks' scans and the holders they find, its owner's only
        proc.read_only_users(target.owners)
    cfg = build_config(target.argv, {**options, **FORCED}, config, use_pty=False, attached=True)
    _check_action(cfg.on_hang.value)  # hangwatch.toml's too
    # hangwatch did not start it and reads at most its output: only a proven hang ends it (no clock, no budget)
    cfg = dataclasses.replace(cfg, blind=True, stop_over_budget=False)
    sup = Supervisor(cfg)
    sup.launcher = lambda argv, env, on_chunk: AttachedJob(target, sup.ctx.output, on_chunk)
    sup.ctx.say(
        f"hangwatch: attached to pid {pid} ({' '.join(redact_argv(target.argv))[:120]}); {target.where_output_goes()}; "
        f"--on-hang {cfg.on_hang.value}; Ctrl-C detaches and leaves the job running. Run directory: {cfg.run_dir}"
    )
    return sup.run()


def _check_action(action: object) -> None:
    if action is not None and action not in ACTIONS:
        raise UsageError(
            f"--on-hang {action} needs a job hangwatch started, and this one was not",
            "Use --on-hang report or kill here, or start the job under `hangwatch run` to restart or heal it",
        )
