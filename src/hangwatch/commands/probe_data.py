"""`hangwatch probe-data TARGET`: the fastest DataLoader settings that do not hang."""

from __future__ import annotations

import sys

import click


def _csv(kind: type, name: str, value: str) -> tuple:  # type: ignore[type-arg]
    try:
        items = tuple(kind(x.strip()) for x in value.split(",") if x.strip())
    except ValueError as e:
        raise click.BadParameter(f"{value!r} is not a comma-separated list", param_hint=name) from e
    if not items:
        raise click.BadParameter("empty list", param_hint=name)
    return items


@click.command("probe-data")
@click.argument("target")
@click.option("--batch-size", type=click.IntRange(min=1), help="Batch size [the target's, else 8].")
@click.option("--samples", type=click.IntRange(min=1), default=200, show_default=True, help="Items to read and use.")
@click.option(
    "--item-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds an item (or a cell's next batch) may take before it counts as hung.",
)
@click.option(
    "--cell-timeout",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    help="Seconds one DataLoader configuration may take in all.",
)
@click.option("--workers", default="2,4", show_default=True, help="Worker counts to try (0 is always the baseline).")
@click.option("--contexts", default="fork,spawn", show_default=True, help="Start methods: fork,spawn,forkserver.")
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Epochs per configuration (epoch boundaries hang too).",
)
@click.option("--json", "as_json", is_flag=True, help="Print hangwatch.probe/1 JSON.")
def probe_data(
    target: str,
    batch_size: int | None,
    samples: int,
    item_timeout: float,
    cell_timeout: float,
    workers: str,
    contexts: str,
    epochs: int,
    as_json: bool,
) -> int:
    """Find the fastest DataLoader settings that do not hang. TARGET: pkg.module:function or file.py:function."""
    import json

    from hangwatch.probe.matrix import ProbeOptions, probe
    from hangwatch.report.probe_text import probe_view, render_probe

    ctxs = _csv(str, "--contexts", contexts)
    bad = [c for c in ctxs if c not in ("fork", "spawn", "forkserver")]
    if bad:
        raise click.BadParameter(f"unknown start method(s) {bad}", param_hint="--contexts")
    opts = ProbeOptions(
        batch_size=batch_size,
        samples=samples,
        item_timeout=item_timeout,
        cell_timeout=cell_timeout,
        workers=_csv(int, "--workers", workers),
        contexts=ctxs,
        epochs=epochs,
    )
    if as_json or not sys.stdout.isatty():
        result = probe(target, opts)
    else:
        from rich.live import Live

        with Live(refresh_per_second=4, transient=True) as live:
            result = probe(target, opts, on_update=lambda r: live.update(probe_view(r)))
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        render_probe(result, sys.stdout)
    return 0 if result.recommendation() is not None else 1
