"""Every setting of `hangwatch run`, declared once: its name, kind, default, bounds, section and help.

The click options of `hangwatch run` (commands/run.py), the keys `hangwatch.toml` accepts, the defaults of
``RunConfig`` and the checks of ``build_config`` (supervise/config.py), and docs/options.md (docs/gen.py) are all
read from ``OPTIONS``; nothing else spells a default. Imports nothing of hangwatch: ``hangwatch run --help`` reads
it without loading the supervisor.
"""

from __future__ import annotations

from typing import Any

from hangwatch.records.run import OnHang
from hangwatch.records.values import frozen

# How a value is read and checked (supervise/config.py's ``parse``):
#   number: a float at least ``minimum`` (above it when ``strict``); count: the same, a whole number;
#   choice: one of ``choices``; flag: a bare --flag (on/off in TOML); switch: --x/--no-x; on_off: on | off;
#   text: a string; path: a file path; size: bytes, or 500M, 2G; port: 0..65535; many: repeatable strings;
#   custom: read and checked by build_config itself (a pattern, a date, options for the command, a table).
KINDS = ("number", "count", "choice", "flag", "switch", "on_off", "text", "path", "size", "port", "many", "custom")
_TYPES = {
    "number": "float",
    "count": "int",
    "choice": "str",
    "text": "str",
    "path": "Path",
    "size": "int",
    "port": "int",
}
_TYPES |= {"flag": "bool", "switch": "bool", "on_off": "bool", "many": "tuple[str, ...]"}


@frozen
class Option:
    """One setting of `hangwatch run`."""

    name: str  # the TOML key and RunConfig's field; the flag is --name-with-dashes
    section: str  # the heading `run --help` and docs/options.md list it under
    help: str  # what it does, without its default
    kind: str = "text"
    default: Any = None
    minimum: float = 0.0
    strict: bool = False  # the value must be above ``minimum``, not equal to it
    choices: tuple[str, ...] = ()
    shown: str | None = None  # the default as help shows it where the value says nothing ("never"); "" hides it
    cli: bool = True  # a flag of `hangwatch run`
    toml: bool = True  # a key of hangwatch.toml
    field: bool = True  # RunConfig has a field of this name (a custom kind's value is build_config's to make)
    type: str = ""  # the field's type where the kind does not say it (a custom kind's; a choice held as an enum)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:  # a misspelt kind would be read as text, unchecked
            raise ValueError(f"option {self.name}: unknown kind {self.kind!r}")
        if self.kind == "custom" and self.field and not self.type:
            raise ValueError(f"option {self.name}: a custom kind's field needs its type")

    def annotation(self) -> str:
        """The type of RunConfig's field: the kind's (``| None`` where there is no default), or ``type``."""
        if self.type:
            return self.type
        base = _TYPES[self.kind]
        return f"{base} | None" if self.default is None else base

    @property
    def flag(self) -> str:
        """``--min-stall``."""
        return "--" + self.name.replace("_", "-")

    def default_text(self) -> str:
        """The default as help and the docs show it: ``120``, ``on``, ``report``; "" for none."""
        if self.shown is not None:
            return self.shown
        v = self.default
        if v is None:
            return ""
        if isinstance(v, bool):
            return "on" if v else "off"
        return f"{v:g}" if isinstance(v, float) else str(v)

    def help_text(self) -> str:
        """The help line: what it does, then its default in brackets."""
        shown = self.default_text()
        return f"{self.help} [{shown}]." if shown else f"{self.help}."


DETECTION, RECOVERY, COST, CLUSTERS, OUTPUT = "Detection", "Recovery", "Cost and deadline", "Clusters", "Output"
SECTION_ORDER = (DETECTION, RECOVERY, COST, CLUSTERS, OUTPUT)

OPTIONS: tuple[Option, ...] = (
    # Detection
    Option(
        "min_stall",
        DETECTION,
        "No stall is declared before this many seconds without progress",
        "number",
        120.0,
        strict=True,
    ),
    Option("startup_grace", DETECTION, "Seconds allowed before the first progress signal", "number", 900.0),
    Option(
        "progress_regex",
        DETECTION,
        "Extra progress pattern; named group `step` for a counter",
        "custom",
        type="re.Pattern[str] | None",
    ),
    Option(
        "capture_window",
        DETECTION,
        "Seconds to sample a suspect job",
        "number",
        None,
        minimum=0.2,
        shown="min-stall/4, within 1..5",
    ),
    Option("max_slow", DETECTION, "Total extra seconds given to a job that is slow but alive", "number", 1800.0),
    # A job that is alive but has not progressed is bounded by its own history: hung after
    # max(history_floor, history_factor x its median progress interval) without progress (a DataLoader worker's
    # batch: x the number of workers), and a phase after phase_factor x the longest earlier phase of that name.
    # Why these numbers: docs/stalls.md#evidence-decides-not-the-clock.
    Option(
        "history_factor",
        DETECTION,
        "An alive job with no progress is hung after this many times its median progress interval (a DataLoader "
        "worker's batch: times its workers)",
        "number",
        100.0,
        minimum=1,
    ),
    Option("history_floor", DETECTION, "...but never before this many seconds without progress", "number", 60.0),
    Option(
        "phase_factor",
        DETECTION,
        "A phase (checkpoint, validation) is hung after this many times the longest earlier phase of its name",
        "number",
        10.0,
        minimum=1,
    ),
    Option(
        "rendezvous_timeout",
        DETECTION,
        "Seconds ranks or nodes may wait for peers at process-group setup before the job is hung (reported as "
        "waiting before that)",
        "number",
        300.0,
        strict=True,
    ),
    Option(
        "native",
        DETECTION,
        "Read native (C/C++) frames in every capture (slower; automatic where Python says nothing)",
        "flag",
        False,
        shown="",
    ),
    Option(
        "autobeat",
        DETECTION,
        "Make torch jobs beat on each optimizer step and DataLoader batch, through a startup hook on the job's "
        "PYTHONPATH",
        "switch",
        True,
    ),
    Option(
        "flight_recorder",
        DETECTION,
        "Turn on torch's flight recorder (TORCH_FR_BUFFER_SIZE, unless set) and read every rank's collectives at "
        "a stall through torch's worker server on a unix socket",
        "switch",
        True,
    ),
    # Recovery
    Option(
        "on_hang",
        RECOVERY,
        "report | kill | restart | heal (a stuck or dead DataLoader worker replaced inside the job; else restart)",
        "choice",
        OnHang.REPORT,
        choices=tuple(m.value for m in OnHang),
        type="OnHang",
    ),
    Option("max_restarts", RECOVERY, "Restarts allowed in one run", "count", 3),
    Option("max_heals", RECOVERY, "DataLoader workers --on-hang heal may replace in one run", "count", 3),
    Option(
        "fallback",
        RECOVERY,
        "Repeatable: restart k applies fallbacks 1..k to the command",
        "custom",
        field=False,
    ),
    Option(
        "resume_arg",
        RECOVERY,
        "Options every restart gets, with the newest checkpoint autobeat saw: '--resume {checkpoint}' "
        "({checkpoint_step} too; also usable in --fallback and its env)",
        "custom",
        type="str | None",
    ),
    Option(
        "auto_fallback",
        RECOVERY,
        "on | off: when --fallback is used up, the root cause picks the restart's remedy (spawn, num_workers=0, ...)",
        "on_off",
        True,
    ),
    Option("restart_on_crash", RECOVERY, "Restart a job that exits with an error", "flag", False, shown=""),
    Option("kill_grace", RECOVERY, "Seconds between SIGTERM and SIGKILL when ending the job", "number", 30.0),
    Option(
        "gpu_release_timeout",
        RECOVERY,
        "Before a restart, seconds to wait for the ended job's GPU memory to be freed",
        "number",
        60.0,
    ),
    Option(
        "relaunch_on_held_gpu",
        RECOVERY,
        "Restart even when the ended job's GPU memory stays held (usually a certain OOM)",
        "flag",
        False,
        shown="",
    ),
    Option(
        "remedies",
        RECOVERY,
        "A table of cause -> the remedies a restart tries, in order (replaces the catalogue's)",
        "custom",
        default=(),
        type="tuple[tuple[str, tuple[str, ...]], ...]",
        shown="",
        cli=False,
    ),
    Option(
        "remedy_rates",
        RECOVERY,
        "A table of remedy -> its step rate as a fraction of the rate without it",
        "custom",
        default=(),
        type="tuple[tuple[str, float], ...]",
        shown="",
        cli=False,
    ),
    # Cost and deadline
    Option("cost_per_hour", COST, "Price of the machine in USD, for cost and waste figures", "number"),
    Option(
        "budget",
        COST,
        "USD: warn once when the projected total cost passes it (needs --cost-per-hour)",
        "number",
        strict=True,
    ),
    Option(
        "on_over_budget",
        COST,
        "warn | stop: stop ends the job cleanly, after its next checkpoint when one was seen",
        "choice",
        "warn",
        choices=("warn", "stop"),
        field=False,
    ),
    Option(
        "deadline",
        COST,
        "When the run must be done: +36h, +2d12h, or an ISO time (2026-11-26T18:00). The projected finish is "
        "shown against it, with a warning when it crosses it",
        "custom",
        type="float | None",  # unix time
    ),
    Option(
        "total_steps",
        COST,
        "Steps the job will run, for the ETA",
        "count",
        minimum=1,
        shown="the job's n/N counter, or the trainer's max steps",
    ),
    # Clusters
    Option(
        "coord",
        CLUSTERS,
        "Multi-node: HOST:PORT of the coordination store",
        "custom",
        shown="master port + 1 of node 0",
        toml=False,
        field=False,
    ),
    Option(
        "node_rank",
        CLUSTERS,
        "Multi-node: this node's rank",
        "custom",
        shown="from torchrun's --node-rank",
        toml=False,
        field=False,
    ),
    Option(
        "nodes",
        CLUSTERS,
        "Multi-node: number of nodes",
        "custom",
        shown="from torchrun's --nnodes",
        toml=False,
        field=False,
    ),
    Option(
        "coord_token",
        CLUSTERS,
        "Multi-node: the secret all nodes' hangwatches share",
        "custom",
        shown="$HANGWATCH_COORD_TOKEN, else Slurm's job id, torchrun's --rdzv-id, or the command line",
        toml=False,
        field=False,
    ),
    Option(
        "metrics_port",
        CLUSTERS,
        "Serve Prometheus metrics on this port at /metrics (needs the `metrics` extra; 0: any free port)",
        "port",
    ),
    Option(
        "metrics_textfile",
        CLUSTERS,
        "Write the same metrics to this file (atomically), for node_exporter's textfile collector",
        "path",
    ),
    Option("run_label", CLUSTERS, "The `run` label of the metrics", "text", "", shown="the run directory's name"),
    # Output
    Option(
        "run_dir",
        OUTPUT,
        "Where the log, incidents and summary go",
        "path",
        shown="hangwatch-runs/<UTC time>-<cmd>",
        field=False,
    ),
    Option("notify", OUTPUT, "Repeatable: an apprise URL to send incidents to", "many", (), shown=""),
    Option(
        "log_max_size",
        OUTPUT,
        "Rotate output.log at this size (bytes, or 500M, 2G): output.log.1, output.log.2, and so on",
        "size",
        shown="never",
    ),
    Option("log_keep", OUTPUT, "Rotated output.log files kept", "count", 5),
    Option("config", OUTPUT, "Settings in TOML", "path", shown="hangwatch.toml if present", toml=False, field=False),
)

BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
DEFAULTS: dict[str, Any] = {o.name: o.default for o in OPTIONS}
TOML_KEYS: frozenset[str] = frozenset(o.name for o in OPTIONS if o.toml)
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (s, tuple(o.flag for o in OPTIONS if o.section == s and o.cli)) for s in SECTION_ORDER
)


SETTINGS_HEAD = '''"""The settings of `hangwatch run` that ``RunConfig`` holds: one typed field per option of the table
(supervise/options.py), its default the table's. Generated from the table by `python docs/gen.py`: do not edit
(tests/unit/test_options.py fails when it differs)."""

from __future__ import annotations

import re
from pathlib import Path

from hangwatch.records.run import OnHang
from hangwatch.records.values import frozen
from hangwatch.supervise.options import DEFAULTS


@frozen(kw_only=True)
class Settings:
    """The run's settings, read and checked by build_config (supervise/config.py)."""

'''


def settings_source() -> str:
    """supervise/settings.py: a field for each option RunConfig holds, typed by its kind, defaulting to the table."""
    lines = []
    for o in OPTIONS:
        if o.field:
            lines.append(f'    {o.name}: {o.annotation()} = DEFAULTS["{o.name}"]\n')
    return SETTINGS_HEAD + "".join(lines)
