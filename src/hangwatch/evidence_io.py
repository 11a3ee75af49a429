"""Evidence to and from JSON: for recorded fixtures and for `inspect --evidence FILE` bug reports."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from hangwatch.records.evidence import (
    C10dWait,
    CollectiveEntry,
    Evidence,
    ExitTimer,
    FlightRecord,
    Frame,
    GroupStatus,
    LoaderTask,
    LocalsRead,
    LockHolder,
    LockWait,
    NativeStack,
    ProcessEvidence,
    ProcessInfo,
    ProcessSample,
    Rearm,
    RendezvousRead,
    Role,
    ThreadSample,
    VanishedProcess,
)
from hangwatch.records.gpu import KernelEvent, gpu_from_dict

SCHEMA = "hangwatch.evidence/1"


def evidence_to_dict(ev: Evidence) -> dict[str, Any]:
    """Evidence as a ``hangwatch.evidence/1`` JSON object."""
    d = asdict(ev)
    d["schema"] = SCHEMA
    for p in d["processes"]:
        p["info"]["role"] = p["info"]["role"].value if isinstance(p["info"]["role"], Role) else p["info"]["role"]
        if p.get("flight"):
            p["flight"].pop("raw", None)  # the whole dump is saved beside an incident, not in the evidence
    return d


def evidence_to_json(ev: Evidence) -> str:
    """Evidence as ``hangwatch.evidence/1`` JSON text."""
    return json.dumps(evidence_to_dict(ev), indent=1)


def _loader_task(t: dict[str, Any] | None) -> LoaderTask | None:
    return LoaderTask(**{**t, "indices": tuple(int(i) for i in t.get("indices", ()))}) if t else None


def _frame(f: dict[str, Any]) -> Frame:
    return Frame(**{**f, "holds": tuple(f.get("holds", ()))})


def _holder(h: dict[str, Any]) -> LockHolder:
    return LockHolder(
        **{
            **h,
            "frames": tuple(_frame(f) for f in h.get("frames", ())),
            "waits_for": tuple(_holder(k) for k in h.get("waits_for", ())),
        }
    )


def _wait(w: dict[str, Any]) -> LockWait:
    holders = tuple(_holder(h) for h in w.get("holders", ()))
    return LockWait(
        **{**w, "holders": holders, "sharers": tuple(w.get("sharers", ())), "waiters": tuple(w.get("waiters", ()))}
    )


def _c10d(c: dict[str, Any]) -> C10dWait:
    members = c.get("members")
    return C10dWait(**{**c, "members": tuple(members) if members is not None else None})


def _flight(f: dict[str, Any] | None) -> FlightRecord | None:
    if not f:
        return None
    entries = tuple(
        CollectiveEntry(
            **{
                **e,
                "input_sizes": tuple(tuple(s) for s in e.get("input_sizes", ())),
                "output_sizes": tuple(tuple(s) for s in e.get("output_sizes", ())),
                "dtypes": tuple(e.get("dtypes", ())),
                "frame": _frame(e["frame"]) if e.get("frame") else None,
            }
        )
        for e in f.get("entries", ())
    )
    return FlightRecord(
        **{
            **{k: v for k, v in f.items() if k != "raw"},
            "entries": entries,
            "status": tuple(GroupStatus(**s) for s in f.get("status", ())),
        }
    )


def evidence_from_dict(d: dict[str, Any]) -> Evidence:
    """Read ``hangwatch.evidence/1`` (recorded fixtures, bug reports)."""
    if d.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} object")
    procs = [_process(p) for p in d["processes"]]
    fields = {
        k: v
        for k, v in d.items()
        if k not in ("schema", "processes", "notes", "rank_progress", "gpu", "kernel", "known_pids", "vanished")
    }
    return Evidence(
        **fields,
        processes=tuple(procs),
        notes=tuple(d.get("notes", ())),
        rank_progress=tuple((int(r), float(at), step) for r, at, step in d.get("rank_progress", ())),
        gpu=gpu_from_dict(d["gpu"]) if d.get("gpu") else None,
        kernel=tuple(KernelEvent(**k) for k in d.get("kernel", ())),
        known_pids=tuple(int(p) for p in d.get("known_pids", ())),
        vanished=tuple(VanishedProcess(**v) for v in d.get("vanished", ())),
    )


def _process(p: dict[str, Any]) -> ProcessEvidence:
    """One process of ``hangwatch.evidence/1``."""
    info = dict(p["info"])
    info["role"] = Role(info["role"])
    info["cmdline"] = tuple(info["cmdline"])
    info["timer_signals"] = tuple(info["timer_signals"]) if info.get("timer_signals") is not None else None
    samples = tuple(
        ProcessSample(
            **{
                **s,
                "threads": tuple(
                    ThreadSample(**{**t, "frames": tuple(_frame(f) for f in t["frames"])}) for t in s["threads"]
                ),
            }
        )
        for s in p["samples"]
    )
    local_reads = tuple(
        LocalsRead(
            **{
                **r,
                "values": tuple((str(n), str(v)) for n, v in r["values"]),
                "private": tuple(r["private"]) if r.get("private") is not None else None,
            }
        )
        for r in p.get("locals", ())
    )
    native = tuple(
        NativeStack(tid=int(n["tid"]), frames=tuple(_frame(f) for f in n["frames"])) for n in p.get("native", ())
    )
    return ProcessEvidence(
        info=ProcessInfo(**info),
        samples=samples,
        exited=p["exited"],
        output_tail=p["output_tail"],
        locals=local_reads,
        native=native,
        rendezvous=RendezvousRead(**p["rendezvous"]) if p.get("rendezvous") else None,
        waits=tuple(_wait(w) for w in p.get("waits", ())),
        writing=tuple((str(a), int(b)) for a, b in p.get("writing", ())),
        flight=_flight(p.get("flight")),
        loader_task=_loader_task(p.get("loader_task")),
        c10d=_c10d(p["c10d"]) if p.get("c10d") else None,
        rearms=tuple(Rearm(**r) for r in p.get("rearms", ())),
        daemons=tuple(p.get("daemons", ())),
        exit_timers=tuple(ExitTimer(**x) for x in p.get("exit_timers", ())),
        tracer=_holder(p["tracer"]) if p.get("tracer") else None,
        heap_sharers=tuple(p["heap_sharers"]) if p.get("heap_sharers") is not None else None,
    )
