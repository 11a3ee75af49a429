"""One cell of the probe matrix, run in its own process:

    python -m hangwatch.probe.cell '<json spec>'

Builds the DataLoader the spec describes over the target, iterates it for the given epochs and
prints one JSON line per batch, then a final line; the parent measures and watches it.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from typing import Any


def batch_len(batch: Any, default: int) -> int:
    """Samples in a batch: the first dimension of a tensor, of the first field of a tuple/dict."""
    first = batch
    if isinstance(batch, dict) and batch:
        first = next(iter(batch.values()))
    elif isinstance(batch, (list, tuple)) and batch and hasattr(batch[0], "shape"):
        first = batch[0]
    shape = getattr(first, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    if isinstance(first, (list, tuple)):
        return len(first)
    return default


def emit(**fields: Any) -> None:
    """One JSON line to the probe that runs this cell."""
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def main() -> None:
    """Run one DataLoader configuration given as JSON in argv, reporting batches as JSON lines."""
    spec = json.loads(sys.argv[1])
    from torch.utils.data import DataLoader, Subset

    from hangwatch.probe.target import load_target

    target = load_target(spec["target"])
    kwargs = dict(target.loader_kwargs)
    kwargs.update(spec["loader"])
    if kwargs.get("num_workers", 0) == 0:
        for k in ("multiprocessing_context", "persistent_workers", "prefetch_factor"):
            kwargs.pop(k, None)
    dataset = Subset(target.dataset, spec["indices"]) if target.kind == "map" else target.dataset
    loader = DataLoader(dataset, **kwargs)
    batches_per_epoch = None if target.kind == "map" else max(1, spec["samples"] // kwargs["batch_size"])
    emit(event="loader")  # imports and the target are done: from here on, the DataLoader's own start
    t0 = time.perf_counter()
    samples, first = 0, None
    for epoch in range(spec["epochs"]):
        it = iter(loader) if batches_per_epoch is None else itertools.islice(iter(loader), batches_per_epoch)
        for batch in it:
            samples += batch_len(batch, kwargs["batch_size"])
            if first is None:
                first = time.perf_counter() - t0
            emit(event="batch", epoch=epoch, samples=samples)
    emit(event="done", samples=samples, seconds=time.perf_counter() - t0, first_batch_s=first)


if __name__ == "__main__":
    main()
