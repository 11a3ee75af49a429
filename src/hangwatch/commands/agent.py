"""`hangwatch agent`: watch every training job on this node, with no change to how they are launched."""

from __future__ import annotations

import os
import pwd
import re
import sys
from pathlib import Path
from typing import Any

import click

from hangwatch.errors import UsageError

AGENT_KEYS = ("users", "act_users", "on_hang", "min_stall", "notify", "runs_dir", "metrics_port", "scan_every", "match")


def _toml(path: str | None) -> dict[str, Any]:
    if path is None:
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            table = tomllib.load(f).get("agent", {})
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{path} cannot be read as TOML ({e})", "Check the file: an [agent] table") from None
    unknown = sorted(set(table) - set(AGENT_KEYS))
    if unknown:
        raise UsageError(f"{path}: unknown [agent] key(s) {', '.join(unknown)}", f"Use {', '.join(AGENT_KEYS)}")
    return dict(table)


@click.command()
@click.option("--runs-dir", default=None, help="Each job's run directory goes under it [hangwatch-runs].")
@click.option(
    "--user",
    "users",
    multiple=True,
    help="Repeatable: a user whose jobs are watched ('*': every user) [the agent's own user].",
)
@click.option(
    "--act-user",
    "act_users",
    multiple=True,
    help="Repeatable: a user whose jobs --on-hang applies to ('*': every watched user); others: reported [none].",
)
@click.option("--on-hang", default=None, help="report | kill, for the jobs of --act-user users [report].")
@click.option("--min-stall", default=None, help="Passed to each attach [120].")
@click.option("--notify", multiple=True, help="Repeatable: an apprise URL each job's incidents are sent to.")
@click.option("--metrics-port", default=None, type=int, help="Serve every job's metrics on this port at /metrics.")
@click.option("--scan-every", default=None, type=float, help="Seconds between two looks for new jobs [5].")
@click.option("--match", default=None, help="Only the jobs whose command line this regular expression finds [all].")
@click.option("--config", default=None, help="Settings in TOML, an [agent] table of the same names.")
def agent(config: str | None, **options: Any) -> int:
    """Watch every training job on this node: hangwatch agent [OPTIONS]

    Finds each Python process with torch loaded (at its launcher: torchrun, accelerate, the script that spawned its
    ranks), attaches to it as `hangwatch attach` does, and lets it go when it ends. Jobs under `hangwatch run` are
    left to their supervisor. Only the users named are watched; only --act-user's jobs are ever acted on."""
    from hangwatch.supervise.agent import SCAN_EVERY_S, Agent, AgentConfig, user_ids

    toml = _toml(config)

    def pick(name: str, default: Any = None) -> Any:
        v = options.get(name)
        return v if v not in (None, ()) else toml.get(name, default)

    me = pwd.getpwuid(os.getuid()).pw_name
    users = _names(pick("users", [me]))
    act = _names(pick("act_users", []))
    on_hang = str(pick("on_hang", "report"))
    if on_hang not in ("report", "kill"):
        raise UsageError(f"--on-hang {on_hang} is not offered by the agent", "Use --on-hang report or kill")
    attach_args: list[str] = []
    if pick("min_stall") is not None:
        attach_args += ["--min-stall", str(pick("min_stall"))]
    for url in pick("notify", []):
        attach_args += ["--notify", str(url)]
    scan_every = float(pick("scan_every", SCAN_EVERY_S))
    if scan_every < 0.1:
        raise UsageError(f"--scan-every {scan_every:g} is too short", "Pass at least 0.1 (seconds)")
    cfg = AgentConfig(
        runs_dir=Path(pick("runs_dir", "hangwatch-runs")),
        users=user_ids(users),
        act_users=user_ids(act) if act else set(),
        on_hang=on_hang,
        attach_args=tuple(attach_args),
        metrics_port=pick("metrics_port"),
        scan_every=scan_every,
        match=_pattern(pick("match")),
    )
    click.echo(
        f"hangwatch agent: watching the jobs of {', '.join(users)}; acting ({on_hang}) on "
        f"{', '.join(act) or 'none'}; run directories under {cfg.runs_dir}",
        err=True,
    )
    return Agent(cfg).run()


def _pattern(text: Any) -> re.Pattern[str] | None:
    if text in (None, ""):
        return None
    try:
        return re.compile(str(text))
    except re.error as e:
        raise UsageError(
            f"--match {text!r} is not a regular expression ({e})", "Write it as Python's re does"
        ) from None


def _names(value: Any) -> list[str]:
    """Users from the command line (a tuple) or the TOML file (a list, or one name)."""
    return [value] if isinstance(value, str) else [str(u) for u in value]
