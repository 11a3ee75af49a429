"""A run's figures for Prometheus: ``/metrics`` over HTTP (``--metrics-port``) and a textfile for
node_exporter's textfile collector (``--metrics-textfile``, written atomically), through
``prometheus_client`` (the ``metrics`` extra: ``pip install 'hangwatch[metrics]'``).

The loop hands a ``Snapshot`` over every few seconds; a scrape reads the newest one (no lock: the
snapshot is replaced whole), so serving never touches the loop's state. Every series carries ``run``
and ``node``; the per-rank ones (step, seconds since progress) also ``rank`` (``""``: the job as a whole).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hangwatch.atomic import write_text_atomic
from hangwatch.errors import UsageError
from hangwatch.records.run import RunState, RunSummary
from hangwatch.records.values import frozen

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

log = logging.getLogger(__name__)

INSTALL_FIX = "Install the extra: pip install 'hangwatch[metrics]' (prometheus_client)"


@frozen
class Snapshot:
    """What the metrics show, as of one round of the loop."""

    summary: RunSummary
    attempt_started_at: float | None = None
    ranks: tuple[tuple[int, float, int | None], ...] = ()  # (rank, last progress at, step)
    incidents: tuple[tuple[str, str, int], ...] = ()  # (cause, verdict, count)


@dataclass(eq=False)  # registered in a registry: hashed by identity
class RunCollector:
    """A prometheus_client collector over the newest snapshot."""

    run: str
    node: str
    host: str = ""
    command: str = ""
    snapshot: Snapshot | None = None
    clock: Any = field(default=time.time)

    def describe(self) -> list[Any]:
        """No fixed description: the families depend on what the run knows."""
        return []

    def collect(self) -> Iterator[Any]:
        """The metric families, from the newest snapshot."""
        from prometheus_client.core import GaugeMetricFamily

        snap = self.snapshot
        base, ids = ["run", "node"], [self.run, self.node]
        info = GaugeMetricFamily(
            "hangwatch_info", "The run hangwatch supervises (value 1)", labels=[*base, "host", "command"]
        )
        info.add_metric([*ids, self.host, self.command], 1)
        yield info
        if snap is None:
            return
        yield from self._progress(snap, base, ids)
        yield from self._counts(snap, base, ids)
        s = snap.summary
        for name, doc, value in (
            ("hangwatch_steps_per_second", "The recent step rate", s.steps_per_s),
            ("hangwatch_goodput_ratio", "Fraction of wall time spent progressing", s.goodput),
            ("hangwatch_cost_usd", "What the run has cost so far (--cost-per-hour)", s.cost_usd),
            ("hangwatch_projected_cost_usd", "The cost to finish at the current rate", s.projected_cost_usd),
            ("hangwatch_eta_seconds", "Seconds to the total steps at the current rate", s.eta_seconds),
        ):
            g = GaugeMetricFamily(name, doc, labels=base)
            if value is not None:
                g.add_metric(ids, float(value))
            yield g

    def _progress(self, snap: Snapshot, base: list[str], ids: list[str]) -> Iterator[Any]:
        """The newest step and the seconds since progress, for the job and for each rank."""
        from prometheus_client.core import GaugeMetricFamily

        s, now = snap.summary, self.clock()
        step = GaugeMetricFamily(
            "hangwatch_step", 'The newest step (rank "": the job as a whole)', labels=[*base, "rank"]
        )
        since = GaugeMetricFamily(
            "hangwatch_seconds_since_progress",
            "Seconds since the last progress (since the attempt's start when none yet)",
            labels=[*base, "rank"],
        )
        if s.last_step is not None:
            step.add_metric([*ids, ""], s.last_step)
        last = s.last_progress_at if s.last_progress_at is not None else snap.attempt_started_at
        if last is not None and s.ended_at is None:
            since.add_metric([*ids, ""], max(0.0, now - last))
        for rank, at, rstep in snap.ranks:
            if rstep is not None:
                step.add_metric([*ids, str(rank)], rstep)
            if s.ended_at is None:
                since.add_metric([*ids, str(rank)], max(0.0, now - at))
        yield step
        yield since

    def _counts(self, snap: Snapshot, base: list[str], ids: list[str]) -> Iterator[Any]:
        """The run's state, its incidents by cause and verdict, and its restarts."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        s = snap.summary
        state = GaugeMetricFamily(
            "hangwatch_state", "1 for the run's current state, 0 for the others", labels=[*base, "state"]
        )
        for st in RunState:
            state.add_metric([*ids, st.value], 1.0 if s.state == st else 0.0)
        yield state
        incidents = CounterMetricFamily(
            "hangwatch_incidents", "Incidents written, by root cause and verdict", labels=[*base, "cause", "verdict"]
        )
        for cause, verdict, n in snap.incidents:
            incidents.add_metric([*ids, cause, verdict], n)
        yield incidents
        restarts = CounterMetricFamily("hangwatch_restarts", "Restarts of the job in this run", labels=base)
        restarts.add_metric(ids, max(0, s.attempts - 1))
        yield restarts


class Metrics:
    """Serves (and/or writes) the run's metrics; created before the job starts, so a busy port or a
    missing library is a usage error and nothing is launched."""

    def __init__(
        self,
        port: int | None,
        textfile: Path | None,
        run: str,
        node: str,
        host: str,
        command: str,
        addr: str = "0.0.0.0",  # noqa: S104 - a scrape target, like node_exporter
    ) -> None:
        try:
            from prometheus_client import CollectorRegistry, start_http_server
        except ImportError as e:
            raise UsageError("--metrics-port and --metrics-textfile need prometheus_client", INSTALL_FIX) from e
        self.collector = RunCollector(run, node, host, command)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.collector)
        self.textfile = textfile
        self.server: WSGIServer | None = None
        if textfile is not None and not textfile.parent.is_dir():
            raise UsageError(
                f"--metrics-textfile {textfile}: the directory {textfile.parent} does not exist",
                "Pass a path in node_exporter's --collector.textfile.directory",
            )
        if port is not None:
            try:
                self.server, _ = start_http_server(port, addr=addr, registry=self.registry)
            except OSError as e:
                raise UsageError(
                    f"cannot serve metrics on port {port}: {e.strerror}",
                    "Pick a free port with --metrics-port, or leave it out",
                ) from e
        self.port = self.server.server_port if self.server is not None else None

    def update(self, snapshot: Snapshot) -> None:
        """Show ``snapshot`` from now on; write the textfile."""
        self.collector.snapshot = snapshot
        if self.textfile is not None:
            from prometheus_client import generate_latest

            try:
                write_text_atomic(self.textfile, generate_latest(self.registry).decode())
            except OSError:  # a full disk must not stop supervision
                log.warning("could not write %s", self.textfile, exc_info=True)

    def close(self) -> None:
        """Stop serving (the textfile stays, with the run's final figures)."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
