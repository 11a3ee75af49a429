"""The launcher's own arguments in a job's command line (torchrun, python -m torch.distributed.run):
pure parsers that the capture (rendezvous) and the supervisor (topology) both read."""

from __future__ import annotations


def launcher_args(argv: list[str]) -> list[str] | None:
    """The arguments of torchrun/torch.distributed.run in ``argv`` (before the script), else None."""
    for i, a in enumerate(argv):
        if a.endswith("torchrun") or a.endswith("torch.distributed.run") or a.endswith("torch.distributed.launch"):
            return argv[i + 1:]
        if a == "-m" and i + 1 < len(argv) and argv[i + 1] in ("torch.distributed.run", "torch.distributed.launch"):
            return argv[i + 2:]
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
