"""The settings of `hangwatch run` that ``RunConfig`` holds: one typed field per option of the table
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

    min_stall: float = DEFAULTS["min_stall"]
    startup_grace: float = DEFAULTS["startup_grace"]
    progress_regex: re.Pattern[str] | None = DEFAULTS["progress_regex"]
    capture_window: float | None = DEFAULTS["capture_window"]
    max_slow: float = DEFAULTS["max_slow"]
    history_factor: float = DEFAULTS["history_factor"]
    history_floor: float = DEFAULTS["history_floor"]
    phase_factor: float = DEFAULTS["phase_factor"]
    rendezvous_timeout: float = DEFAULTS["rendezvous_timeout"]
    native: bool = DEFAULTS["native"]
    autobeat: bool = DEFAULTS["autobeat"]
    flight_recorder: bool = DEFAULTS["flight_recorder"]
    on_hang: OnHang = DEFAULTS["on_hang"]
    max_restarts: int = DEFAULTS["max_restarts"]
    max_heals: int = DEFAULTS["max_heals"]
    resume_arg: str | None = DEFAULTS["resume_arg"]
    auto_fallback: bool = DEFAULTS["auto_fallback"]
    restart_on_crash: bool = DEFAULTS["restart_on_crash"]
    kill_grace: float = DEFAULTS["kill_grace"]
    gpu_release_timeout: float = DEFAULTS["gpu_release_timeout"]
    relaunch_on_held_gpu: bool = DEFAULTS["relaunch_on_held_gpu"]
    remedies: tuple[tuple[str, tuple[str, ...]], ...] = DEFAULTS["remedies"]
    remedy_rates: tuple[tuple[str, float], ...] = DEFAULTS["remedy_rates"]
    cost_per_hour: float | None = DEFAULTS["cost_per_hour"]
    budget: float | None = DEFAULTS["budget"]
    deadline: float | None = DEFAULTS["deadline"]
    total_steps: int | None = DEFAULTS["total_steps"]
    metrics_port: int | None = DEFAULTS["metrics_port"]
    metrics_textfile: Path | None = DEFAULTS["metrics_textfile"]
    run_label: str = DEFAULTS["run_label"]
    notify: tuple[str, ...] = DEFAULTS["notify"]
    log_max_size: int | None = DEFAULTS["log_max_size"]
    log_keep: int = DEFAULTS["log_keep"]
