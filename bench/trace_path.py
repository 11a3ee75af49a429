"""Bench: the path one stuck DataLoader worker takes through hangwatch under `--on-hang restart`, from the CLI to
the relaunch, as a trace (not a reading of the code): every call into a hangwatch module on the loop's thread,
recorded with ``sys.setprofile`` while `hangwatch run` runs in this process, up to the second launch of the job.
Printed: the files the path crosses in the order it first enters them, how many times it moves from one file
to another, and how many times it comes back to a file it had left (a re-entry). Issue [3/5] asks for these
before and after its redesign: run it against another checkout with `--src OTHER/src`.

    python bench/trace_path.py [--src PATH] [--min-stall 5]
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

callbacks: Counter[tuple[str, str]] = Counter()  # (file called back, the file that called it back) -> calls

JOB = r"""
import os, threading, time
import torch
from torch.utils.data import DataLoader, Dataset

class Shards(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        if i == 5 and os.environ.get("HANGWATCH_ATTEMPT", "1") == "1":
            threading.Event().wait()  # a shard read that never returns, in the first attempt only
        return torch.tensor([i])

for step, batch in enumerate(DataLoader(Shards(), batch_size=1, num_workers=2)):
    print(f"step {step}", flush=True)
    time.sleep(0.05)
    if os.environ.get("HANGWATCH_ATTEMPT") != "1" and step == 3:
        break
"""


def trace(src: Path, min_stall: float, workdir: Path) -> list[str]:
    """The hangwatch files entered, one per call, on the loop's thread, until the job's second launch."""
    sys.path.insert(0, str(src))
    import hangwatch
    from hangwatch.cli import main

    root = Path(hangwatch.__file__).resolve().parent
    job = workdir / "job.py"
    job.write_text(JOB)
    calls: list[str] = []
    launches = 0
    callbacks.clear()
    loop = threading.current_thread()

    def profile(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal launches
        if event != "call" or threading.current_thread() is not loop:
            return
        f = frame.f_code.co_filename
        if (
            f.endswith("subprocess.py")
            and frame.f_code.co_name == "__init__"
            and str(job) in str(frame.f_locals.get("args"))
        ):
            launches += 1  # the second is the relaunch: the path ends there (the run goes on, untraced)
        if f.startswith(str(root)) and launches < 2 and frame.f_code.co_name != "<module>":  # an import: not a step
            here = str(Path(f).resolve().relative_to(root))
            calls.append(here)
            below, back = frame.f_back, None  # a call back: into a file still on the stack under another file
            while below is not None:
                g = below.f_code.co_filename
                if g == f and back is not None:
                    callbacks[(here, back)] += 1
                    break
                if g != f and g.startswith(str(root)) and back is None:
                    back = str(Path(g).resolve().relative_to(root))
                below = below.f_back

    argv = ["run", "--on-hang", "restart", "--max-restarts", "1", "--min-stall", str(min_stall)]
    argv += ["--run-dir", str(workdir / "run"), "--", sys.executable, str(job)]
    sys.setprofile(profile)
    try:
        main(argv)
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    if launches < 2:
        raise SystemExit("the job was not relaunched: no path to report")
    return calls


def main_() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    ap.add_argument("--min-stall", type=float, default=5.0)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.child:  # in a fresh interpreter: nothing of this checkout's hangwatch imported before the trace
        cmd = [sys.executable, __file__, "--child", "--src", str(args.src), "--min-stall", str(args.min_stall)]
        env = {**os.environ, "PYTHONPATH": str(args.src)}
        raise SystemExit(subprocess.run(cmd, env=env, timeout=600, check=False).returncode)
    with tempfile.TemporaryDirectory() as d:
        calls = trace(args.src, args.min_stall, Path(d))
    path = [f for i, f in enumerate(calls) if i == 0 or calls[i - 1] != f]  # one entry per stay in a file
    first: dict[str, int] = {}
    left: set[str] = set()
    reentries: Counter[str] = Counter()
    for i, f in enumerate(path):
        first.setdefault(f, i)
        if f in left:
            reentries[f] += 1
        if i:
            left.add(path[i - 1])
    moves = set(itertools.pairwise(path))
    print(f"calls traced: {len(calls)}, on the loop's thread (a capture's own thread is not followed)")
    print(f"files crossed: {len(first)}; distinct moves between two files: {len(moves)}")
    print(
        f"moves in all: {len(path) - 1}; re-entries into a file already left: {sum(reentries.values())}, "
        f"into {len(reentries)} files"
    )
    print(
        f"calls back into a file still on the stack under another (a file that calls out and is called back): "
        f"{sum(callbacks.values())}, {len(callbacks)} distinct (file, caller)"
    )
    for (f, by), n in callbacks.most_common():
        print(f"  {f} called back from {by}: {n}")
    for f in sorted(first, key=first.__getitem__):
        print(f"  {f:<44} calls {calls.count(f):>7}  re-entered {reentries[f]:>5}")


if __name__ == "__main__":
    main_()
