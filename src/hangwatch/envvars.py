"""Every environment variable hangwatch reads or sets, declared once (docs/reference.md is generated from this
table; tests/unit/test_reference.py checks that the code names no other)."""

from __future__ import annotations

from hangwatch.records.values import frozen


@frozen
class EnvVar:
    """One variable: who sets it, who reads it, what it does."""

    name: str
    set_by: str
    meaning: str


ENVIRONMENT: tuple[EnvVar, ...] = (
    EnvVar(
        "HANGWATCH_COORD_TOKEN",
        "you",
        "the multi-node coordination token (as --coord-token); the same on every node",
    ),
    EnvVar(
        "HANGWATCH_PY_SPY",
        "you",
        "the py-spy binary to use (default: beside this Python, then on PATH)",
    ),
    EnvVar(
        "HANGWATCH_STACK_TIMEOUT_S",
        "you",
        "seconds one stack read of a sample may take (default 8)",
    ),
    EnvVar(
        "HANGWATCH_WATCHDOG_S",
        "you",
        "a supervision round slower than this is logged as a `watchdog` event (default 60)",
    ),
    EnvVar(
        "HANGWATCH_DEBUG",
        "you",
        "`1`: an internal error prints its traceback instead of one sentence",
    ),
    EnvVar(
        "HANGWATCH_GPU_FAKE",
        "you (tests, demos)",
        "read GPUs from this JSON file of readings instead of NVML / nvidia-smi",
    ),
    EnvVar(
        "HANGWATCH_KMSG_FILE",
        "you (tests, demos)",
        "read this saved kernel log instead of /dev/kmsg",
    ),
    EnvVar(
        "HANGWATCH_STRICT_RULES",
        "the tests",
        "`1`: a fault in the wait-for graph raises instead of being logged and left out",
    ),
    EnvVar(
        "HANGWATCH_RUN_DIR",
        "`hangwatch run`, for the job",
        "the run directory",
    ),
    EnvVar(
        "HANGWATCH_ATTEMPT",
        "`hangwatch run`, for the job",
        "this attempt's number, 1 first",
    ),
    EnvVar(
        "HANGWATCH_SUPERVISOR_PID",
        "`hangwatch run`, for the job",
        "the supervising hangwatch (so `inspect` leaves it out of the job)",
    ),
    EnvVar(
        "HANGWATCH_HEARTBEAT_DIR",
        "`hangwatch run`, for the job",
        "where `hangwatch.beat()` and the startup hook write heartbeat slots, checkpoints, flight registries",
    ),
    EnvVar(
        "HANGWATCH_AUTOBEAT",
        "`hangwatch run`, for the job",
        "`1`: the startup hook beats for the job; `0` (--no-autobeat): it does nothing",
    ),
    EnvVar(
        "HANGWATCH_FLIGHT",
        "`hangwatch run`, for the job",
        "`0` (--no-flight-recorder): the hook leaves torch's flight recorder alone; `fifo`: it serves it through a "
        "FIFO even where torch has a worker server",
    ),
    EnvVar(
        "HANGWATCH_HEAL",
        "`hangwatch run --on-hang heal`, for the job",
        "how many DataLoader workers the hook may still replace in place (the run's --max-heals less its heals)",
    ),
    EnvVar(
        "HANGWATCH_HEAL_SKIP",
        "`hangwatch run --on-hang heal`, on a restart",
        "the samples earlier attempts left out, which stay out (JSON: dataset class:length -> sample indices)",
    ),
    EnvVar(
        "HANGWATCH_PHASE_TIMEOUT",
        "`hangwatch run`, for the job",
        "seconds a checkpoint or compile phase may last (the run's --max-slow)",
    ),
    EnvVar(
        "HANGWATCH_REMEDY_DATALOADER",
        "`hangwatch run`, on a restart",
        "the DataLoader settings the cause's remedy applies (JSON: num_workers, multiprocessing_context, ...)",
    ),
    EnvVar(
        "HANGWATCH_REMEDY_WHY",
        "`hangwatch run`, on a restart",
        "why the remedy applies, for the job's log",
    ),
)
