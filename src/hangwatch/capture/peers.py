"""Whom a rank blocked in a point-to-point call waits on: the other end of its ``dist.send``/``dist.recv``, read
from the call's own arguments (``dst``, ``src``) with one py-spy --locals read, so that the wait-for graph can draw
an edge from rank to rank (a rank that sends to one that sends back: a cycle)."""

from __future__ import annotations

from typing import Any

from hangwatch.capture.locals import read_locals_once
from hangwatch.records.evidence import PeerWait, ProcessInfo, ProcessSample

C10D = "torch/distributed/distributed_c10d.py"
PEER_ARG = {"send": "dst", "recv": "src"}
MAX_READS = 16  # ranks read in one capture (one py-spy each, in parallel, 3 s at most together)


def _p2p_frame(frame: Any) -> bool:
    """torch's own ``send``/``recv`` frame (a ``Frame``, or a frame of py-spy's JSON)."""
    if isinstance(frame, dict):
        file, name = str(frame.get("filename", "")), str(frame.get("name", ""))
    else:
        file, name = frame.file, frame.function
    return file.endswith(C10D) and name in PEER_ARG


def in_p2p(pid: int, samples: list[ProcessSample] | tuple[ProcessSample, ...]) -> bool:
    """The main thread of ``pid`` sat in torch's ``send`` or ``recv``, idle, in the last two samples."""
    last = [next((t for t in s.threads if t.tid == pid), None) for s in samples[-2:]]
    return len(last) == 2 and all(
        t is not None and t.active is False and any(_p2p_frame(f) for f in t.frames) for t in last
    )


def read_peers(
    series: dict[int, list[ProcessSample]], infos: dict[int, ProcessInfo], gone: set[int], py_spy: str | None
) -> tuple[dict[int, PeerWait], list[str]]:
    """pid -> the point-to-point call each rank is blocked in, and its peer; and notes on what could not be read."""
    wanted = [p for p, ss in series.items() if p not in gone and infos[p].rank is not None and in_p2p(p, ss)]
    if not py_spy or not wanted:
        return {}, []
    reads, notes = read_locals_once({p: {p} for p in sorted(wanted)[:MAX_READS]}, py_spy, _p2p_frame)
    out: dict[int, PeerWait] = {}
    for pid, rs in reads.items():
        for r in rs:
            values = dict(r.values)
            raw = values.get(PEER_ARG.get(r.function, ""), "None")
            out[pid] = PeerWait(r.function, int(raw) if raw.lstrip("-").isdigit() else None)
    return out, notes
