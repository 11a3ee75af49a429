"""The probe: items one by one, the num_workers=0 baseline, then a matrix of DataLoader settings,
each cell in its own process under a timeout; a hung or crashed cell gets capture and diagnosis."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil

from hangwatch.capture import capture_job
from hangwatch.diagnose import diagnose
from hangwatch.diagnose.crash import diagnose_crash
from hangwatch.errors import CaptureError, UsageError
from hangwatch.probe.items import scan_items
from hangwatch.probe.target import Target, load_target
from hangwatch.records.incident import Finding, Verdict
from hangwatch.records.probe import Cell, CellStatus, ProbeResult
from hangwatch.records.values import frozen
from hangwatch.recover.terminate import JobTracker, end_tree, popen_waiter

STARTUP_ALLOWANCE_S = 30.0  # a cell's first batch may take this long (spawn imports torch in each worker)
# With fork the workers start from the cell's own imports: once its DataLoader exists, the first batch
# has this long (or --item-timeout, if longer) before the cell counts as hung.
FORK_FIRST_BATCH_S = 10.0


@frozen
class ProbeOptions:
    """What probe-data varies and how long it waits."""

    batch_size: int | None = None
    samples: int = 200
    item_timeout: float = 10.0
    cell_timeout: float = 60.0
    workers: tuple[int, ...] = (2, 4)
    contexts: tuple[str, ...] = ("fork", "spawn")
    epochs: int = 2


def run_cell(target: Target, cell: Cell, indices: list[int], opts: ProbeOptions, batch_size: int) -> None:
    """Run one cell in its own process under its timeouts; fill in its status, speed and finding."""
    spec = {
        "target": target.spec,
        "loader": cell.loader_kwargs(batch_size),
        "indices": indices,
        "epochs": opts.epochs,
        "samples": opts.samples,
    }
    proc, lines, errors, readers = _start_cell(spec)
    tracker = JobTracker(proc.pid)
    cell.status = CellStatus.RUNNING
    t0 = time.monotonic()
    first_batch = max(
        FORK_FIRST_BATCH_S if cell.multiprocessing_context == "fork" else STARTUP_ALLOWANCE_S, opts.item_timeout
    )
    done, hung, finding, peak = _watch_cell(proc, lines, tracker, opts, first_batch)
    if hung:
        cell.status = CellStatus.HUNG
        cell.finding = finding
    end_tree(tracker, 2.0, popen_waiter(proc))
    for r in readers:
        r.join(5)
    cell.seconds = time.monotonic() - t0
    cell.peak_rss_mb = round(peak / 2**20, 1)
    if cell.status == CellStatus.HUNG:
        return
    if done is not None and proc.returncode in (0, None, -15, -9):
        cell.status = CellStatus.OK
        cell.first_batch_s = round(done["first_batch_s"] or 0.0, 3)
        cell.samples_per_s = round(done["samples"] / done["seconds"], 1) if done["seconds"] else None
        return
    cell.status = CellStatus.CRASHED
    tail = "".join(errors)
    findings = diagnose_crash(proc.returncode if proc.returncode is not None else 1, tail)
    cell.finding = findings[0]


def _start_cell(
    spec: dict[str, Any],
) -> tuple[subprocess.Popen[bytes], queue.SimpleQueue[str], list[str], list[threading.Thread]]:
    """The cell's process started in its own session, with a thread reading each of its pipes: its lines come to
    the queue, the last 200 of its stderr to the list."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([p for p in sys.path if p] + [os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hangwatch.probe.cell", json.dumps(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    lines: queue.SimpleQueue[str] = queue.SimpleQueue()
    errors: list[str] = []

    def read_out() -> None:
        assert proc.stdout is not None  # noqa: S101 - PIPE was asked for
        for raw in proc.stdout:
            lines.put(raw.decode(errors="replace"))

    def read_err() -> None:
        assert proc.stderr is not None  # noqa: S101
        for raw in proc.stderr:
            errors.append(raw.decode(errors="replace"))
            del errors[:-200]

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for r in readers:
        r.start()
    return proc, lines, errors, readers


def _watch_cell(
    proc: subprocess.Popen[bytes],
    lines: queue.SimpleQueue[str],
    tracker: JobTracker,
    opts: ProbeOptions,
    first_batch_s: float,
) -> tuple[dict[str, Any] | None, bool, Finding | None, float]:
    """Follow a cell until it is done, exits, or stalls: (final message, hung?, the hung cell's finding (None where it
    could not be read), peak RSS of its tree). Before its DataLoader exists (imports, the target) it has
    STARTUP_ALLOWANCE_S; then ``first_batch_s`` for the first batch; then --item-timeout between batches. A stall is
    looked at first: a look that proves work (torch ending its workers, a batch's long computation) or says it is not
    hung (a worker dead and its exit on its way to the main process, which raises at torch's next check) gives it
    another --item-timeout, up to --cell-timeout; a hung verdict, or a look that could not be read, is a hung cell."""
    t0 = time.monotonic()
    loader_at: float | None = None
    last_batch: float | None = None
    peak, proven_until = 0.0, 0.0
    while True:
        try:
            msg = json.loads(lines.get(timeout=0.2))
        except (queue.Empty, ValueError):  # nothing, or a stray print of the user's dataset on stdout
            msg = None
        event = msg.get("event") if isinstance(msg, dict) else None  # (`print(12)` parses as JSON too)
        if event == "batch":
            last_batch = time.monotonic()
        elif event == "loader":
            loader_at = time.monotonic()
        elif event == "done":
            return msg, False, None, peak
        tracker.scan()
        peak = max(peak, sum(_rss(p) for p in tracker.alive()))
        now = time.monotonic()
        if proc.poll() is not None:  # exited: its last lines may still be on their way
            while True:
                try:
                    msg = json.loads(lines.get(timeout=1.0))
                except queue.Empty:
                    return None, False, None, peak
                except ValueError:
                    continue
                if isinstance(msg, dict) and msg.get("event") == "done":
                    return msg, False, None, peak
        if last_batch:
            stalled = now - last_batch > opts.item_timeout
        elif loader_at:
            stalled = now - loader_at > min(opts.cell_timeout, first_batch_s)
        else:
            stalled = now - t0 > min(opts.cell_timeout, max(STARTUP_ALLOWANCE_S, opts.item_timeout))
        if now - t0 > opts.cell_timeout:
            return None, True, _look(proc.pid)[1], peak
        if stalled and now >= proven_until:
            hung, finding = _look(proc.pid)
            if proc.poll() is not None or not lines.empty():
                continue  # it ended, or said something, during the look: read above first
            if hung:
                return None, True, finding, peak
            proven_until = time.monotonic() + opts.item_timeout


def _rss(p: psutil.Process) -> float:
    try:
        return float(p.memory_info().rss)
    except psutil.Error:
        return 0.0


def _look(pid: int) -> tuple[bool, Finding | None]:
    """A look at a stalled cell: whether it is hung (its verdict says so and nothing it measured proves work, or
    it could not be read) and its root finding."""
    try:
        evidence = capture_job(pid, 1.0)
    except CaptureError:
        return True, None
    d = diagnose(evidence)
    return d.verdict == Verdict.HUNG and not d.root.proves_work, d.root


def probe(spec: str, opts: ProbeOptions, on_update: Callable[[ProbeResult], None] = lambda r: None) -> ProbeResult:
    """The whole probe: items, baseline, then every cell; ``on_update`` after each step."""
    try:
        import torch  # noqa: F401 - the probe builds real DataLoaders
    except ImportError as e:
        raise UsageError(
            "probe-data needs torch in hangwatch's environment",
            "Install hangwatch into the job's environment (pip install 'hangwatch[torch]')",
        ) from e
    target = load_target(spec)
    batch_size = opts.batch_size or int(target.loader_kwargs.get("batch_size") or 8)
    items = scan_items(target, opts.samples, opts.item_timeout)
    result = ProbeResult(spec, items, Cell(None, 0, False), batch_size=batch_size)
    on_update(result)
    indices = items.good[: opts.samples]
    if target.kind == "map" and not indices:
        return result  # nothing readable: the item report says why
    result.cells = [Cell(ctx, n, pw) for ctx in opts.contexts for n in opts.workers if n > 0 for pw in (True, False)]
    run_cell(target, result.baseline, indices, opts, batch_size)
    on_update(result)
    for cell in result.cells:
        run_cell(target, cell, indices, opts, batch_size)
        on_update(result)
    return result
