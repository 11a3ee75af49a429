"""Bench: what reading a process without stopping it costs in torn stacks.

A look reads a process with ``py-spy --nonblocking`` when a thread of it is blocked in a write that a stop would cut
short (capture/stacks.py ``why_not_stop``). That thread's stack cannot move while it waits; a *running* thread of
the same process can, and may be read torn. The worst case: a process whose main thread recurses to a varying depth
as fast as it can while a second thread waits in a write to a full pipe. It is read N times each way, alternated:
blocking (the baseline) and ``--nonblocking``. A second program is a training step's shape: the main thread
spends most of its time in one C call under a still Python stack. A read is torn when its main-thread stack is not
one the program can have (a frame at a line its caller is not at, the recursion's frames out of order, no
``<module>`` at the bottom), failed when py-spy answers with an error. The waiting thread's stack is checked too
(it must be the same every time).

Measured here (2 cores, 100 reads each way): recursing, blocking 99 whole / 1 torn, nonblocking 23 / 77; steady,
both 100 whole. A process is read this way only while one of its threads waits in such a write.

    python bench/unstopped.py [--reads 200]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAM = r"""
import os, sys, threading

def writer(fd):
    data = b"x" * (1 << 20)
    while data:  # a loop of os.write: a cut-short write is written on, so the thread stays in its write
        data = data[os.write(fd, data):]  # WRITE

def level(n):
    if n == 0:  # LEVEL0
        return leaf()  # LEAF_CALL
    return level(n - 1)  # RECURSE

def step():
    return sum(range(200_000))  # STEP


def leaf():
    s = 0  # LEAF_A
    for i in range(300):  # LEAF_B
        s += i  # LEAF_C
    return s  # LEAF_D

r, w = os.pipe()
threading.Thread(target=writer, args=(w,), daemon=True, name="writer").start()
print("ready", flush=True)
if sys.argv[1] == "recursing":
    while True:
        for d in range(1, 40):  # TOP_FOR
            level(d)  # TOP_CALL
while True:  # steady: a training step's shape, most of its time in one C call under a still Python stack
    step()  # STEP_CALL
"""


def _lines(source: str) -> dict[str, int]:
    return {ln.rsplit("# ", 1)[1].split()[0]: n for n, ln in enumerate(source.splitlines(), 1) if "  # " in ln}


def _torn(frames: list[dict], at: dict[str, int], kind: str) -> bool:
    """Whether a main-thread stack (innermost first) is one the program cannot have."""
    names = [(f.get("name"), f.get("line")) for f in frames]
    if kind == "steady":
        return names not in ([("step", at["STEP"]), ("<module>", at["STEP_CALL"])], [("<module>", at["STEP_CALL"])])
    if not names or names[-1][0] != "<module>" or names[-1][1] not in (at["TOP_FOR"], at["TOP_CALL"]):
        return True
    inner = names[:-1]
    if not inner:
        return False  # between two calls, in <module> alone
    leaf_lines = {at[k] for k in ("LEAF_A", "LEAF_B", "LEAF_C", "LEAF_D")}
    if inner[0][0] == "leaf":
        if inner[0][1] not in leaf_lines or not inner[1:] or inner[1] != ("level", at["LEAF_CALL"]):
            return True
        rest = inner[2:]
    elif inner[0][0] == "level":
        if inner[0][1] not in (at["LEVEL0"], at["LEAF_CALL"], at["RECURSE"]):
            return True
        rest = inner[1:]
    else:
        return True
    return any(f != ("level", at["RECURSE"]) for f in rest)


def _read(py_spy: str, pid: int, nonblocking: bool, at: dict[str, int], kind: str) -> tuple[str, float]:
    cmd = [py_spy, "dump", "--json", "--pid", str(pid)] + (["--nonblocking"] if nonblocking else [])
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    took = time.perf_counter() - t0
    if p.returncode != 0:
        return "failed", took
    try:
        threads = json.loads(p.stdout)
    except ValueError:
        return "failed", took
    main = next((t for t in threads if t.get("thread_name") == "MainThread"), None)
    writer = next((t for t in threads if t.get("thread_name") == "writer"), None)
    if main is None or writer is None:
        return "torn", took
    w = [(f.get("name"), f.get("line")) for f in writer["frames"]]
    if not w or w[0] != ("writer", at["WRITE"]):
        return "torn", took
    return ("torn" if _torn(main["frames"], at, kind) else "whole"), took


def _measure(kind: str, reads: int, py_spy: str, tmp: str) -> None:
    at = _lines(PROGRAM)
    script = Path(tmp) / "program.py"
    script.write_text(PROGRAM)
    job = subprocess.Popen([sys.executable, str(script), kind], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert job.stdout is not None and job.stdout.readline().strip() == b"ready"
        time.sleep(0.5)
        from hangwatch.capture.stacks import why_not_stop

        refusal = why_not_stop([job.pid]).get(job.pid)
        print(f"{kind}: why_not_stop says: {refusal.why if refusal else None}")
        counts = {mode: {"whole": 0, "torn": 0, "failed": 0} for mode in ("blocking", "nonblocking")}
        took: dict[str, list[float]] = {"blocking": [], "nonblocking": []}
        for _ in range(reads):
            for mode in ("blocking", "nonblocking"):
                got, seconds = _read(py_spy, job.pid, mode == "nonblocking", at, kind)
                counts[mode][got] += 1
                took[mode].append(seconds)
    finally:
        os.killpg(job.pid, 9)
        job.wait(timeout=10)
    for mode, c in counts.items():
        bad = c["torn"] + c["failed"]
        med = sorted(took[mode])[len(took[mode]) // 2] * 1000
        print(
            f"  {mode:12s} reads {reads}: whole {c['whole']}, torn {c['torn']}, failed {c['failed']} "
            f"({100 * bad / reads:.1f} % unusable), median {med:.0f} ms a read"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reads", type=int, default=200, help="reads each way, for each program")
    args = ap.parse_args()
    py_spy = str(Path(sys.executable).parent / "py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("recursing", "steady"):
            _measure(kind, args.reads, py_spy, tmp)


if __name__ == "__main__":
    main()
