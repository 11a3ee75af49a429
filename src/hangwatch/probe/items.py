"""Step 1 of the probe: read items one by one in this process, each under a timeout.

A read that does not return is left behind in a daemon thread (a thread cannot be killed); its stack
is taken from sys._current_frames() so the report says where it hangs.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from typing import Any

from hangwatch.probe.target import Target
from hangwatch.records.probe import ItemReport
from hangwatch.signatures import is_library_file

SLOW_FACTOR, SLOW_MIN_S = 10.0, 0.05


def _where(thread: threading.Thread) -> dict[str, Any] | None:
    frame = sys._current_frames().get(thread.ident or -1)
    stack = traceback.extract_stack(frame) if frame is not None else []
    user = [f for f in stack if not is_library_file(f.filename) and not f.filename.endswith("/probe/items.py")]
    f = user[-1] if user else (stack[-1] if stack else None)
    if f is None:
        return None
    return {"file": f.filename, "line": f.lineno, "function": f.name, "code": (f.line or "").strip() or None}


def _timed(call: Any, timeout: float) -> tuple[str, Any, float, threading.Thread]:
    box: dict[str, Any] = {}

    def run() -> None:
        t0 = time.perf_counter()
        try:
            box["value"] = call()
        except BaseException as e:  # noqa: BLE001 - any failure of the user's code is a finding
            box["error"] = f"{type(e).__name__}: {e}"
        box["seconds"] = time.perf_counter() - t0

    t = threading.Thread(target=run, name="hangwatch-probe-item", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        return "hung", None, timeout, t
    if "error" in box:
        return "failed", box["error"], box["seconds"], t
    return "ok", box.get("value"), box["seconds"], t


def scan_items(target: Target, samples: int, item_timeout: float) -> ItemReport:
    """Read items one by one, each under ``item_timeout``: failed, hung, slow, and the good indices."""
    rep = ItemReport()
    times: dict[int, float] = {}
    if target.kind == "map":
        n = min(samples, target.length or 0)
        for i in range(n):
            status, value, secs, t = _timed(lambda i=i: target.dataset[i], item_timeout)
            rep.checked += 1
            if status == "hung":
                rep.hung.append({"index": i, "where": _where(t)})
            elif status == "failed":
                rep.failed.append({"index": i, "error": str(value)[:300]})
            else:
                times[i] = secs
                rep.good.append(i)
    else:
        it: Iterator[Any] = iter(target.dataset)
        for i in itertools.count():
            if i >= samples:
                break
            status, value, secs, t = _timed(lambda: next(it), item_timeout)
            if status == "failed" and str(value).startswith("StopIteration"):
                break
            rep.checked += 1
            if status == "hung":
                rep.hung.append({"index": i, "where": _where(t)})
                break  # the iterator is stuck inside that thread: nothing after it can be read
            if status == "failed":
                rep.failed.append({"index": i, "error": str(value)[:300]})
                break  # a generator that raised is finished
            times[i] = secs
    if times:
        rep.median_s = statistics.median(times.values())
        limit = max(SLOW_MIN_S, SLOW_FACTOR * rep.median_s)
        rep.slow = [{"index": i, "seconds": round(s, 3)} for i, s in times.items() if s > limit]
    return rep
