"""Bench: cost of hangwatch.beat() in ns, under hangwatch and outside it (a no-op).

Baseline in the same run: an empty Python function call. Target (issue 3): <= 1 us a call.

    python bench/beat.py
"""

from __future__ import annotations

import importlib
import os
import tempfile
import timeit

N = 2_000_000


def empty(step: int | None = None) -> None:
    return None


def per_call_ns(stmt: str, glb: dict[str, object]) -> float:
    return min(timeit.repeat(stmt, globals=glb, number=N, repeat=5)) / N * 1e9


def main() -> None:
    baseline = per_call_ns("f(1)", {"f": empty})
    os.environ.pop("HANGWATCH_HEARTBEAT_DIR", None)
    beat_mod = importlib.import_module("hangwatch.beat")
    importlib.reload(beat_mod)
    noop = per_call_ns("beat(1)", {"beat": beat_mod.beat})
    with tempfile.TemporaryDirectory() as d:
        os.environ["HANGWATCH_HEARTBEAT_DIR"] = d
        importlib.reload(beat_mod)
        live = per_call_ns("beat(1)", {"beat": beat_mod.beat})
        phase = per_call_ns("with phase('x', 60): pass", {"phase": beat_mod.phase}) / 1
    print(f"empty function call (baseline):     {baseline:7.0f} ns")
    print(f"beat(step) outside hangwatch:       {noop:7.0f} ns  ({noop / baseline:.1f}x baseline)")
    print(f"beat(step) under hangwatch:         {live:7.0f} ns  ({live / baseline:.1f}x baseline; target <= 1000 ns)")
    print(f"with phase(...): enter + exit:      {phase:7.0f} ns")
    print("PASS" if live <= 1000 else "OVER TARGET")


if __name__ == "__main__":
    main()
