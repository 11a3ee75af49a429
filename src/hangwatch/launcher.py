"""The launcher's own arguments in a job's command line (torchrun, python -m torch.distributed.run):
pure parsers that the capture (rendezvous) and the supervisor (topology) both read."""

from __future__ import annotations

import re


def launcher_args(argv: list[str]) -> list[str] | None:
    """The arguments of torchrun/torch.distributed.run in ``argv`` (before the script), else None."""
    for i, a in enumerate(argv):
        if a.endswith("torchrun") or a.endswith("torch.distributed.run") or a.endswith("torch.distributed.launch"):
            return argv[i + 1 :]
        if a == "-m" and i + 1 < len(argv) and argv[i + 1] in ("torch.distributed.run", "torch.distributed.launch"):
            return argv[i + 2 :]
    return None


def launcher_option(args: list[str] | tuple[str, ...], *names: str) -> str | None:
    """The value of a launcher option (``--name value`` or ``--name=value``), before the script."""
    for i, a in enumerate(args):
        if a.endswith(".py") or a in ("-m", "--module"):
            break  # the training script: its own options are not the launcher's
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


_INTERPRETER = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?t?$")
_INTERPRETER_VALUE_OPTIONS = frozenset({"-W", "-X", "--check-hash-based-pycs"})
# What a launcher runs as: its console script's name, or the module ``python -m`` runs.
LAUNCHER_PROGRAMS = frozenset(
    {
        "torchrun",
        "deepspeed",
        "accelerate-launch",
        "torch.distributed.run",
        "torch.distributed.launch",
        "deepspeed.launcher.runner",
        "accelerate.commands.launch",
    }
)
SUPERVISOR_PROGRAMS = frozenset({"hangwatch", "hangwatch.cli", "hangwatch.__main__"})


def program(argv: list[str] | tuple[str, ...]) -> tuple[str, str]:
    """What a command line runs and the word after it: ``(module, next)`` for ``python -m module``,
    ``(script's file name, next)`` for ``python script``, ``(program's file name, next)`` otherwise.

    A fact about the command, not a word in a path: ``/home/u/hangwatch-venv/bin/python train.py`` runs
    ``train.py``, and ``python /opt/bin/torchrun ...`` runs ``torchrun``."""
    if not argv:
        return "", ""
    first = argv[0].rsplit("/", 1)[-1]
    if not _INTERPRETER.match(first):
        return first, argv[1] if len(argv) > 1 else ""
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-m" and i + 1 < len(argv):
            return argv[i + 1], argv[i + 2] if i + 2 < len(argv) else ""
        if a.startswith("-m") and len(a) > 2:
            return a[2:], argv[i + 1] if i + 1 < len(argv) else ""
        if a == "-c":
            return "-c", ""
        if a in _INTERPRETER_VALUE_OPTIONS:
            i += 2
            continue
        if a.startswith("-") and a != "-":
            i += 1
            continue
        return a.rsplit("/", 1)[-1], argv[i + 1] if i + 1 < len(argv) else ""
    return first, ""


def is_launcher_command(argv: list[str] | tuple[str, ...]) -> bool:
    """torchrun, deepspeed, ``accelerate launch`` or their modules, by what the command runs."""
    prog, after = program(argv)
    return prog in LAUNCHER_PROGRAMS or (prog == "accelerate" and after == "launch")


def is_supervisor_command(argv: list[str] | tuple[str, ...]) -> bool:
    """``hangwatch ...`` or ``python -m hangwatch ...``: hangwatch's own entry point, by what it runs."""
    return program(argv)[0] in SUPERVISOR_PROGRAMS
