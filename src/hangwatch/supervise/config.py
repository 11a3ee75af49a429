"""`hangwatch run` settings: command-line flags over `hangwatch.toml` over the defaults, each read and
checked as the option table (supervise/options.py) declares it, with clear errors."""

from __future__ import annotations

import math
import os
import re
import shutil
import sys
import time
from dataclasses import field
from datetime import datetime
from pathlib import Path
from typing import Any

from hangwatch.causes import Cause
from hangwatch.errors import UsageError
from hangwatch.records.layout import default_run_dir
from hangwatch.records.run import OnHang
from hangwatch.records.values import frozen
from hangwatch.recover.fallback import parse_fallback
from hangwatch.recover.remedy import REMEDIES
from hangwatch.supervise.options import BY_NAME, DEFAULTS, OPTIONS, TOML_KEYS, Option
from hangwatch.supervise.settings import Settings
from hangwatch.topology import Topology, detect

DEFAULT_CONFIG = "hangwatch.toml"


_RELATIVE = re.compile(
    r"^\+\s*(?:(\d+(?:\.\d+)?)d)?\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m)?\s*"
    r"(?:(\d+(?:\.\d+)?)s)?$"
)


@frozen
class Fallback:
    """One rung of the restart ladder: options applied to the command, environment overrides."""

    args: str = ""
    env: dict[str, str] = field(default_factory=dict)


@frozen(kw_only=True)
class RunConfig(Settings):
    """Everything a run needs, validated: the settings of the option table (``Settings``, generated from it), and
    what build_config makes of the command line, the fallbacks and the nodes."""

    argv: list[str]
    run_dir: Path
    fallbacks: tuple[Fallback, ...] = ()
    stop_over_budget: bool = False  # --on-over-budget stop
    use_pty: bool = False
    topology: Topology | None = None  # set for a multi-node job: coordinate with the other nodes
    # `attach`: hangwatch did not start the job and reads at most its output, so no clock ends it (--startup-grace's
    # probes and --max-slow decide nothing, no `slow` incident): only a proven hang is acted on
    blind: bool = False


def load_toml(path: str | None) -> dict[str, Any]:
    """The run settings of a TOML file (``hangwatch.toml`` in the current directory when None)."""
    if path is None:
        if not Path(DEFAULT_CONFIG).is_file():
            return {}
        path = DEFAULT_CONFIG
    if sys.version_info >= (3, 11):  # imported here: most runs have no config file
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise UsageError(f"cannot read the config file {path}: {e.strerror}", "Check the --config path") from e
    except tomllib.TOMLDecodeError as e:
        raise UsageError(
            f"the config file {path} is not valid TOML ({e})", "Fix the file or pass another --config"
        ) from e
    section = data.get("run", data)  # settings may sit at the top or under [run]
    if not isinstance(section, dict):
        raise UsageError(f"[run] in {path} must be a table", "Write the settings as `key = value` lines")
    data = dict(section)
    unknown = set(data) - TOML_KEYS
    if unknown:
        raise UsageError(
            f"unknown setting(s) in {path}: {', '.join(sorted(unknown))}", f"Use only: {', '.join(sorted(TOML_KEYS))}"
        )
    return data


def _number(name: str, value: Any, minimum: float, integer: bool = False, strict: bool = False) -> float:
    flag = "--" + name.replace("_", "-")
    try:
        x = int(value) if integer else float(value)
        if integer and float(value) != int(value):
            raise ValueError
    except (TypeError, ValueError, OverflowError) as e:
        kind = "a whole number" if integer else "a number"
        raise UsageError(f"{flag} must be {kind}, not {value!r}", f"Pass {flag} {int(minimum) + 1}") from e
    if x < minimum or (strict and x == minimum) or math.isnan(x):
        bound = f"greater than {minimum:g}" if strict else f"at least {minimum:g}"
        raise UsageError(f"{flag} must be {bound}, not {value}", f"Pass a value {bound}")
    return x


def _fallbacks(cli: tuple[str, ...], toml: Any) -> tuple[Fallback, ...]:
    out: list[Fallback] = []
    if cli:
        out = [Fallback(args=a) for a in cli]
    elif toml:
        for item in toml if isinstance(toml, list) else [toml]:
            if isinstance(item, str):
                out.append(Fallback(args=item))
            elif isinstance(item, dict):
                env = item.get("env", {})
                if not isinstance(env, dict):
                    raise UsageError("a [[fallback]] env must be a table of strings", 'Write env = {NAME = "value"}')
                out.append(Fallback(args=str(item.get("args", "")), env={str(k): str(v) for k, v in env.items()}))
            else:
                raise UsageError("each fallback must be a string or a table", 'Write fallback = ["--workers 0"]')
    for fb in out:
        try:
            parse_fallback(fb.args)
        except ValueError as e:
            raise UsageError(
                f"--fallback {fb.args!r} is not a list of options: {e}", "Write it as '--name value --flag'"
            ) from e
    return tuple(out)


# A group that repeats and holds a repeat (or alternatives), repeated again: (a+)+, (a|aa)*, (.*a){12}.
_NESTED_REPEAT = re.compile(r"\((?:[^()\\]|\\.)*(?:[+*}]|\|)(?:[^()\\]|\\.)*\)(?:[+*]|\{\d*,?\d*\})")


def _progress_regex(raw: Any) -> re.Pattern[str] | None:
    """--progress-regex compiled; a pattern that can backtrack catastrophically is refused: it runs
    on the job's output at every poll, and one bad line would freeze the supervisor."""
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise UsageError(f"--progress-regex must be a string, not {raw!r}", "Write it in quotes")
    try:
        regex = re.compile(raw)
    except re.error as e:
        raise UsageError(
            f"--progress-regex is not a valid regular expression ({e})", "Fix the pattern, e.g. 'it (?P<step>\\d+)'"
        ) from e
    if _NESTED_REPEAT.search(raw):
        raise UsageError(
            f"--progress-regex {raw!r} repeats a group that itself repeats, which can backtrack "
            "for minutes on one line",
            "Write it without nested repeats, e.g. 'it (?P<step>\\d+)'",
        )
    return regex


def _strings(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise UsageError(f"{name} must be a list of strings, not {value!r}", f'Write {name} = ["..."]')


def _on_off(name: str, value: Any, bare: bool = False) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("on", "true", "yes", "1"):
        return True
    if text in ("off", "false", "no", "0"):
        return False
    flag = "--" + name.replace("_", "-")
    hint = f"Write {name} = true or false in hangwatch.toml" if bare else f"Pass {flag} on or {flag} off"
    raise UsageError(f"{flag} must be on or off, not {value!r}", hint)


def _remedy_ladders(table: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """hangwatch.toml's [remedies]: cause -> the remedy names to try, in order."""
    if table is None:
        return ()
    known = ", ".join(sorted(REMEDIES))
    if not isinstance(table, dict) or not all(isinstance(v, list) for v in table.values()):
        raise UsageError(
            "[remedies] must map causes to lists of remedy names",
            f'Write e.g. "{Cause.FORK_INHERITED_LOCK}" = ["spawn", "workers0"]; remedies: {known}',
        )
    out = []
    for cause, names in table.items():
        bad = [n for n in names if n not in REMEDIES]
        if bad:
            raise UsageError(f"[remedies] {cause}: unknown remedy {bad[0]!r}", f"Use only: {known}")
        out.append((str(cause), tuple(str(n) for n in names)))
    return tuple(out)


def _remedy_rates(table: Any) -> tuple[tuple[str, float], ...]:
    """hangwatch.toml's [remedy_rates]: remedy -> its expected step rate as a fraction of the current one."""
    if table is None:
        return ()
    known = ", ".join(sorted(REMEDIES))
    if not isinstance(table, dict):
        raise UsageError("[remedy_rates] must map remedy names to numbers", "Write e.g. workers0 = 0.8")
    out = []
    for name, value in table.items():
        if name not in REMEDIES:
            raise UsageError(f"[remedy_rates]: unknown remedy {name!r}", f"Use only: {known}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 10:
            raise UsageError(
                f"[remedy_rates] {name} must be a number above 0 (its rate / the rate without it), not {value!r}",
                f"Write e.g. {name} = 0.8",
            )
        out.append((str(name), float(value)))
    return tuple(out)


def _check_command(argv: list[str]) -> None:
    if not argv:
        raise UsageError("no command to run", "Write it after --, e.g. `hangwatch run -- python train.py`")
    exe = argv[0]
    if os.sep in exe:
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            raise UsageError(f"{exe} is not an executable file", "Check the path, or run it through its interpreter")
    elif shutil.which(exe) is None:
        raise UsageError(f"command not found: {exe}", "Check the spelling and that it is on PATH")


def parse(o: Option, raw: Any) -> Any:
    """One setting's value, read and checked by its kind (supervise/options.py): unset (None) is the default; an
    empty value is unset only for an option with no default."""
    if raw is None:
        return o.default
    if raw == "" and o.default is None and o.kind in ("number", "count", "path", "size", "port"):
        return None  # an option with no default, left empty: unset
    if o.kind == "number":
        return _number(o.name, raw, o.minimum, strict=o.strict)
    if o.kind == "count":
        return int(_number(o.name, raw, o.minimum, integer=True, strict=o.strict))
    if o.kind in ("flag", "switch", "on_off"):
        return _on_off(o.name, raw, bare=o.kind != "on_off")
    if o.kind == "choice":
        if raw not in o.choices:
            said = ", ".join(o.choices[:-1]) + f" or {o.choices[-1]}"
            raise UsageError(f"{o.flag} must be {said}, not {raw!r}", f"Pass {o.flag} {'|'.join(o.choices)}")
        return raw
    if o.kind == "path":
        if not isinstance(raw, str):
            raise UsageError(f"{o.name} must be a path, not {raw!r}", f'Write {o.name} = "path/to/it"')
        return Path(raw)
    if o.kind == "size":
        return _size(o.name, raw)
    if o.kind == "port":
        return _port(raw)
    if o.kind == "many":
        return _strings(o.name, raw)
    return str(raw)  # text


def build_config(
    argv: list[str], options: dict[str, Any], config_path: str | None, use_pty: bool, attached: bool = False
) -> RunConfig:
    """Merge flags (non-None in ``options``) over the TOML file over the defaults; validate; no side effects.
    ``attached``: ``argv`` is the command line of a job already running (`attach`): not run, not read for nodes."""
    toml = load_toml(config_path)

    def pick(name: str) -> Any:
        v = options.get(name)
        return v if v not in (None, ()) else toml.get(name, DEFAULTS[name])

    if not attached:
        _check_command(argv)
    values = {o.name: parse(o, pick(o.name)) for o in OPTIONS if o.field and o.kind != "custom"}
    if values["budget"] is not None and values["cost_per_hour"] is None:
        raise UsageError("--budget needs a price to project the cost", "Pass --cost-per-hour too")
    deadline = pick("deadline")
    resume_arg = pick("resume_arg")
    if resume_arg is not None:
        try:
            parse_fallback(str(resume_arg))
        except ValueError as e:
            raise UsageError(
                f"--resume-arg {resume_arg!r} is not a list of options: {e}", "Write it as '--resume {checkpoint}'"
            ) from e
    run_dir = parse(BY_NAME["run_dir"], pick("run_dir"))
    on_hang = OnHang(values.pop("on_hang"))
    return RunConfig(
        argv=list(argv),
        run_dir=run_dir if run_dir else default_run_dir(argv),
        **values,
        on_hang=on_hang,
        fallbacks=_fallbacks(options.get("fallback") or (), toml.get("fallback")),
        resume_arg=str(resume_arg) if resume_arg else None,
        progress_regex=_progress_regex(pick("progress_regex")),
        stop_over_budget=parse(BY_NAME["on_over_budget"], pick("on_over_budget")) == "stop",
        deadline=None if deadline in (None, "") else parse_deadline(str(deadline)),
        remedies=_remedy_ladders(toml.get("remedies")),
        remedy_rates=_remedy_rates(toml.get("remedy_rates")),
        use_pty=use_pty,
        topology=None if attached else _topology(argv, options),
    )


SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _size(name: str, value: Any) -> int | None:
    """A size in bytes: a number, or a number with K, M, G or T (binary: 500M is 500 MiB)."""
    if value in (None, ""):
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", str(value), re.IGNORECASE)
    size = int(float(m.group(1)) * SIZE_UNITS[m.group(2).upper()]) if m else 0
    if size < 1 << 10:
        raise UsageError(
            f"--{name.replace('_', '-')} must be a size of at least 1K, not {value!r}",
            "Pass e.g. --log-max-size 500M (K, M, G or T)",
        )
    return size


def _port(value: Any) -> int:
    port = int(_number("metrics_port", value, 0, integer=True))
    if port > 65535:
        raise UsageError(
            f"--metrics-port must be a port number (0 to 65535), not {value}", "Pass e.g. --metrics-port 9109"
        )
    return port


def parse_deadline(text: str, now: float | None = None) -> float:
    """``+36h``, ``+2d12h``, ``+90m`` from now, or an ISO time (``2026-11-26T18:00``, local unless it says
    its zone); unix time. UsageError otherwise."""
    now = time.time() if now is None else now
    raw = str(text).strip()
    m = _RELATIVE.match(raw)
    if raw.startswith("+") and m and any(m.groups()):
        d, h, mins, s = (float(g) if g else 0.0 for g in m.groups())
        return now + d * 86400 + h * 3600 + mins * 60 + s
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError as e:
        raise UsageError(
            f"--deadline {raw!r} is neither a time from now (+36h, +2d12h, +90m) nor an ISO time",
            "Pass e.g. --deadline +36h or --deadline 2026-11-26T18:00",
        ) from e


def _topology(argv: list[str], options: dict[str, Any]) -> Topology | None:
    node = options.get("node_rank")
    nodes = options.get("nodes")
    try:
        return detect(
            argv,
            os.environ,
            override_endpoint=options.get("coord"),
            override_node=None if node is None else int(_number("node_rank", node, 0, integer=True)),
            override_nnodes=None if nodes is None else int(_number("nodes", nodes, 1, integer=True)),
            token=options.get("coord_token"),
        )
    except ValueError as e:
        raise UsageError(f"--coord must be HOST:PORT ({e})", "Pass e.g. --coord node0.cluster:29501") from e
