"""`hangwatch doctor`: environment hazards known to hang training, each with its fix."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print hangwatch.doctor/1 JSON.")
@click.option(
    "--checkpoint-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where checkpoints go (free space, network filesystem).",
)
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Where the data is read from.")
@click.option(
    "--shm",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("/dev/shm"),  # noqa: S108
    show_default=True,
    help="The shared-memory filesystem DataLoader workers use.",
)
@click.option("--workers", type=click.IntRange(min=0), help="DataLoader workers the job will use.")
@click.option("--batch-mib", type=click.FloatRange(min=0), help="Size of one batch in MiB (with --workers: shm need).")
@click.option("--gpus", type=click.IntRange(min=1), help="GPUs the job will use (e.g. torchrun's --nproc-per-node).")
def doctor(
    as_json: bool,
    checkpoint_dir: Path,
    data_dir: Path | None,
    shm: Path,
    workers: int | None,
    batch_mib: float | None,
    gpus: int | None,
) -> int:
    """Preflight: environment hazards known to hang training, each with its fix. Exit 1 if any check fails."""
    import json

    from hangwatch.doctor.checks import DoctorInputs, run_checks
    from hangwatch.records.doctor import CheckStatus, doctor_json
    from hangwatch.report.doctor_text import render_doctor

    checks = run_checks(
        DoctorInputs(
            env=dict(os.environ),
            shm=shm,
            checkpoint_dir=checkpoint_dir,
            data_dir=data_dir,
            workers=workers,
            batch_mib=batch_mib,
            gpus=gpus,
        )
    )
    if as_json:
        click.echo(json.dumps(doctor_json(checks), indent=2))
    else:
        render_doctor(checks, sys.stdout)
    return 1 if any(c.status == CheckStatus.FAIL for c in checks) else 0
