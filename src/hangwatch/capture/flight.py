"""Every rank's collectives, read from torch's flight recorder at capture time (issue [2/5]).

Under ``hangwatch run`` each rank serves torch's worker server on a unix socket in the run's heartbeat
directory once it has a process group (``_autobeat/_hangwatch_hook/flight.py``), and says so in
``flight-<pid>.json``. Capture asks every local rank at once, each bounded:

1. ``hangwatch_fr`` (our handler): the recorder with each entry's Python frames; it needs the GIL;
2. ``fr_trace_json`` (torch's C++ handler): the recorder without frames; it answers while Python is stuck;
3. a torch without the server: the rank's FIFO, then its dump file.

A rank that answers none of them is itself evidence (a rank in a native call holding every thread, or
gone). Facts measured on torch 2.13 (docs/facts.md#torchs-flight-recorder): on gloo ``state`` stays
``scheduled``, ``retired`` tells a completed entry from the one a rank waits in; NCCL uses the same format
with ``state`` ``completed``.
"""

from __future__ import annotations

import http.client
import json
import linecache
import os
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from hangwatch import signatures as sg
from hangwatch.records.evidence import CollectiveEntry, FlightRecord, Frame, GroupStatus
from hangwatch.records.layout import flight_registry
from hangwatch.records.values import frozen

HANDLER = "hangwatch_fr"  # the job-side handler (_hangwatch_hook/flight.py FR_HANDLER)
CPP_HANDLERS = ("fr_trace_json", "dump_nccl_trace_json")  # torch's own: gloo's and NCCL's recorders, no frames
TIMEOUT_S = 2.0  # per rank and per way of asking; all ranks at once
# A rank's first dump with frames imports half of torch (torch._inductor, sympy: ~1 s and 28 MB read on an idle
# machine, several seconds on a busy one): when the handler has not answered in TIMEOUT_S and the rank waits in a
# collective (so its GIL is free and the handler is under way), it is asked once more, up to this much longer.
FRAMES_WAIT_S = 4.0
KEEP = 12  # entries per process group kept in the evidence (the newest); the raw dump keeps them all


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


def _post(path: str, handler: str, timeout: float) -> bytes:
    """POST /handler/NAME on a unix socket; the body (raises OSError / HTTPException / ValueError)."""
    conn = _UnixHTTP(path, timeout)
    try:
        conn.request("POST", f"/handler/{handler}")
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise ValueError(f"{handler} answered {resp.status}: {body[:120]!r}")
        return body
    finally:
        conn.close()


@frozen
class RawDump:
    """One rank's answer: the JSON text, or why there is none."""

    pid: int
    rank: int | None
    text: str | None
    via: str | None  # "hangwatch_fr" (with frames), "fifo" (the same), or the C++ handlers that answered
    error: str | None
    seconds: float


def registry(pid: int, heartbeat_dir: str | None) -> dict[str, Any] | None:
    """What the rank ``pid`` registered (``flight-<pid>.json``), or None; None too once the rank closed its reader
    (its process group destroyed, or the rank exiting: ``"kind": "closed"``)."""
    if not heartbeat_dir:
        return None
    try:
        data = json.loads(flight_registry(Path(heartbeat_dir), pid).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("kind") != "closed" else None


def _ask_fifo(entry: dict[str, Any], timeout: float) -> str:
    fifo, out = str(entry["fifo"]), str(entry["dump"])
    before = os.stat(out).st_mtime_ns if os.path.exists(out) else 0
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO: nobody reads it (the thread is gone)
    except OSError as e:
        raise OSError(f"its dump thread does not listen ({e.strerror})") from e
    try:
        os.write(fd, b"dump\n")
    finally:
        os.close(fd)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(out) and os.stat(out).st_mtime_ns > before:
            return Path(out).read_text()
        time.sleep(0.02)
    raise TimeoutError(f"no dump within {timeout:.0f} s")


def _ask(pid: int, entry: dict[str, Any], timeout: float) -> RawDump:
    t0 = time.monotonic()
    rank = entry.get("rank") if isinstance(entry.get("rank"), int) else None
    errors = []
    if entry.get("kind") == "fifo":
        try:
            return RawDump(pid, rank, _ask_fifo(entry, timeout), "fifo", None, time.monotonic() - t0)
        except (OSError, TimeoutError) as e:
            return RawDump(pid, rank, None, None, f"{e}", time.monotonic() - t0)
    path = str(entry.get("socket", ""))
    got: str | None = None
    try:
        text = _post(path, HANDLER, timeout).decode(errors="replace")
        return RawDump(pid, rank, text, HANDLER, None, time.monotonic() - t0)
    except (OSError, http.client.HTTPException, ValueError) as e:
        errors.append(f"{HANDLER}: {type(e).__name__}: {e}"[:160])
    answered = []
    for handler in CPP_HANDLERS:  # each answers while Python is stuck; NCCL's groups are in a recorder of their own
        try:
            text = _post(path, handler, timeout).decode(errors="replace")
        except (OSError, http.client.HTTPException, ValueError) as e:
            errors.append(f"{handler}: {type(e).__name__}: {e}"[:160])
            if isinstance(e, TimeoutError):
                break  # a server that does not answer in time will not answer the next either
            continue
        answered.append(handler)
        got = text if got is None else _merged(got, text)
    if got is None:
        return RawDump(pid, rank, None, None, "; ".join(errors), time.monotonic() - t0)
    if _waits_in_collective(got):  # its handler is under way with the GIL free: the frames are worth a wait
        try:
            framed = _post(path, HANDLER, FRAMES_WAIT_S).decode(errors="replace")
            return RawDump(pid, rank, framed, HANDLER, None, time.monotonic() - t0)
        except (OSError, http.client.HTTPException, ValueError):
            pass
    return RawDump(pid, rank, got, "+".join(answered), None, time.monotonic() - t0)


def _merged(a: str, b: str) -> str:
    """The generic recorder's JSON dump and NCCL's (``b``) as one; whichever parses where the other does not. A
    group in both keeps its two statuses, NCCL's as ``<pg> (nccl)``. (The job's hook merges its two dumps the
    same way, in _autobeat/_hangwatch_hook/flight.py ``merge_dumps``: it cannot import hangwatch.)"""
    da, db = _json_dict(a), _json_dict(b)
    if da is None or db is None:
        return a if db is None else b
    out = {**db, **da, "entries": list(da.get("entries") or []) + list(db.get("entries") or [])}
    for key in ("pg_config", "pg_status"):
        merged = dict(da.get(key) or {})
        for k, v in (db.get(key) or {}).items():
            merged[f"{k} (nccl)" if k in merged and key == "pg_status" else k] = v
        out[key] = merged
    for key in ("version", "comm_lib_version"):
        out[key] = db.get(key) or da.get(key)
    return json.dumps(out)


def _json_dict(text: str) -> dict[str, Any] | None:
    try:
        d = json.loads(text)
    except ValueError:
        return None
    return d if isinstance(d, dict) else None


def _waits_in_collective(text: str) -> bool:
    """The dump has an entry that has not completed: the rank waits in a collective (torch's wait releases the
    GIL), it does not spin in Python."""
    try:
        entries = json.loads(text).get("entries") or []
    except (ValueError, AttributeError):
        return False
    return any(
        isinstance(e, dict)
        and e.get("collective_seq_id")
        and not e.get("retired")
        # NCCL: "started" (queued ones stay "scheduled" while Python runs on); gloo never updates its state
        and (e.get("state") == "started" or str(e.get("profiling_name", "")).startswith("gloo:"))
        for e in entries
    )


def read_dumps(ranks: dict[int, dict[str, Any]], timeout: float = TIMEOUT_S) -> dict[int, RawDump]:
    """pid -> its recorder's dump, every rank asked at once (threads), each bounded by ``timeout`` per way."""
    if not ranks:
        return {}
    with ThreadPoolExecutor(max_workers=min(32, len(ranks))) as pool:
        futures = {pid: pool.submit(_ask, pid, entry, timeout) for pid, entry in ranks.items()}
        return {pid: f.result() for pid, f in futures.items()}


# --- the dump, read into evidence -------------------------------------------------------------------------------
def _frame(f: dict[str, Any]) -> Frame:
    file, line = str(f.get("filename", "?")), int(f.get("line") or 0)
    code = linecache.getline(file, line).strip() or None if file.startswith("/") else None
    return Frame(function=str(f.get("name", "?")), file=file, line=line, code=code)


def _sizes(v: Any) -> tuple[tuple[int, ...], ...]:
    try:
        return tuple(tuple(int(x) for x in s) for s in v or ())
    except (TypeError, ValueError):
        return ()


def _group(e: dict[str, Any]) -> str:
    pg = e.get("process_group")
    if isinstance(pg, list | tuple) and pg:
        name = str(pg[1]) if len(pg) > 1 and pg[1] else str(pg[0])
        return name
    return str(e.get("pg_id", "0"))


def parse_dump(raw: RawDump, since: float | None = None) -> FlightRecord:
    """A rank's recorder as evidence: per process group, the newest entries (with the user's frame when the
    dump has frames) and the group's own status. Entries created before ``since`` (an earlier process group,
    before a restart of the group) are left out."""
    if raw.text is None:
        return FlightRecord(answered=False, via=None, error=raw.error, seconds=round(raw.seconds, 3))
    try:
        data = json.loads(raw.text)
    except ValueError as err:
        return FlightRecord(
            answered=False, via=raw.via, error=f"the dump is not JSON ({err})", seconds=round(raw.seconds, 3)
        )
    entries = [
        _entry(e)
        for e in data.get("entries") or ()
        if since is None or not (created := _created(e)) or created >= since  # (an earlier group's: left out)
    ]
    backends: dict[str, set[str | None]] = {}
    for c in entries:
        backends.setdefault(c.group, set()).add(c.backend)
    # A group with two backends (``cpu:gloo,cuda:nccl``) numbers each backend's collectives on its own: two groups.
    entries = [
        replace(c, group=f"{c.group} (nccl)") if c.backend == "nccl" and len(backends[c.group]) > 1 else c
        for c in entries
    ]
    by_group: dict[str, list[CollectiveEntry]] = {}
    for c in entries:
        by_group.setdefault(c.group, []).append(c)
    kept = tuple(c for g in by_group.values() for c in sorted(g, key=lambda c: c.seq)[-KEEP:])
    status = [
        GroupStatus(
            group=str(pg),
            last_enqueued=_int(st.get("last_enqueued_collective")),
            last_started=_int(st.get("last_started_collective")),
            last_completed=_int(st.get("last_completed_collective")),
        )
        for pg, st in (data.get("pg_status") or {}).items()
        if isinstance(st, dict)
    ]
    return FlightRecord(
        answered=True,
        via=raw.via,
        error=None,
        seconds=round(raw.seconds, 3),
        entries=kept,
        status=tuple(status),
        has_frames=raw.via in (HANDLER, "fifo") and any(c.frame is not None for c in kept),
        version=str(data.get("version") or "") or None,
        raw=raw.text,
    )


def _entry(e: dict[str, Any]) -> CollectiveEntry:
    """One entry of a recorder's dump: the collective, its group, state and sizes, and the user's frame."""
    name = str(e.get("profiling_name") or "")
    backend, _, op = name.partition(":")
    frames = tuple(_frame(f) for f in e.get("frames") or ())
    return CollectiveEntry(
        group=_group(e),
        seq=int(e.get("collective_seq_id") or 0),
        p2p_seq=int(e.get("p2p_seq_id") or 0),
        op=op or name,
        backend=backend if op else None,
        state=str(e.get("state") or ""),
        retired=bool(e.get("retired")),
        created_at=_created(e),
        input_sizes=_sizes(e.get("input_sizes")),
        output_sizes=_sizes(e.get("output_sizes")),
        dtypes=tuple(str(d) for d in e.get("input_dtypes") or ()),
        frame=next((f for f in frames if sg.is_user(f)), None),
        timeout_ms=int(e.get("timeout_ms") or 0) or None,
    )


def _created(e: dict[str, Any]) -> float:
    """When an entry was created, in seconds (0.0: not said)."""
    return float(e.get("time_created_ns") or 0) / 1e9


def _int(v: Any) -> int | None:
    try:
        n = int(v)
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None
