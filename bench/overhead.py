"""Bench: throughput of a CPU training loop with and without `hangwatch run`, alternated.

Target (issue [3/5]): with / without >= 0.99, the median of the pairs' ratios (each pair runs back to back, so
drift on the machine hits both sides alike; which side runs first alternates from pair to pair). Each run trains
for SECONDS and reports its own steps per second.
Target (issue 54): `python -m hangwatch run --run-dir D -- true`, the whole command as a user times it, <= 0.15 s
(median), installed or as an editable checkout under PYTHONDONTWRITEBYTECODE=1; printed with its parts. Issue [4/5]
says it as the README types it, `hangwatch run -- true` (the script pip installs: no runpy), timed first.

    python bench/overhead.py [--pairs 3] [--seconds 8] [--start-only] [--starts 11] [--hook 4]

--hook N: what the hook's optimizer post-hook costs a step inside that trainer, timed around the hook itself (run
cold after torch's own step, which is what a step pays), against an empty hook; N processes of each, alternated.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _jobs import TRAINER, throughput

import hangwatch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--starts", type=int, default=11, help="runs of `hangwatch run -- true` (and of `true`)")
    ap.add_argument(
        "--baseline-src",
        help="another checkout's src/ (e.g. a `git worktree` of the commit before "
        "a change): its start is measured alternately with this one's, in the same run",
    )
    ap.add_argument("--start-only", action="store_true", help="skip the throughput pairs")
    ap.add_argument("--hook", type=int, default=0, metavar="N", help="only the hook's cost a step, N runs a side")
    args = ap.parse_args()
    if args.hook:
        _hook_cost(args.hook)
        return
    ok = True
    if not args.start_only:
        with tempfile.TemporaryDirectory() as d:
            script = Path(d) / "trainer.py"
            script.write_text(TRAINER)
            job = [sys.executable, str(script), str(args.seconds)]
            bare, watched = [], []
            for i in range(args.pairs):
                hw = [sys.executable, "-m", "hangwatch", "run", "--run-dir", f"{d}/run{i}", "--min-stall", "30", "--"]
                sides = [(bare, job), (watched, [*hw, *job])]
                for runs, cmd in sides if i % 2 == 0 else sides[::-1]:  # which runs first alternates: no side is
                    runs.append(throughput(cmd))  # always the second of its pair, on a machine warmed by the first
        b, w = statistics.median(bare), statistics.median(watched)
        ratios = sorted(x / y for x, y in zip(watched, bare, strict=True))  # each pair ran back to back
        r = statistics.median(ratios)
        print(f"without hangwatch: median {b:.1f} steps/s  {[f'{x:.1f}' for x in bare]}")
        print(f"with hangwatch:    median {w:.1f} steps/s  {[f'{x:.1f}' for x in watched]}")
        print(
            f"ratio with/without: median of the pairs {r:.3f} ({ratios[0]:.3f} to {ratios[-1]:.3f}; of the medians "
            f"{w / b:.3f}); target >= 0.99"
        )
        ok = r >= 0.99
    whole = _start_and_exit(args.starts, args.baseline_src)
    print("PASS" if ok and whole <= 0.15 else "UNDER TARGET")


# The imports `hangwatch run` makes, then out as it leaves (os._exit: no teardown of the modules, cli._exit_now).
IMPORTS = (
    "import hangwatch.cli, hangwatch.commands.run, hangwatch.supervise.config, hangwatch.supervise.supervisor, os; "
    "os._exit(0)"
)


HOOK_TIMER = r"""
import os, statistics, sys, tempfile, time
sys.path.insert(0, sys.argv[2])
import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from _hangwatch_hook.slot import _Beats
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
beats = _Beats(tempfile.mkdtemp(), 60.0)
fn = beats.optimizer_step  # as libraries.py registers it (an older hook took the optimizer alone, in a lambda)
if beats.optimizer_step.__code__.co_argcount < 4:
    fn = lambda o, a, k: beats.optimizer_step(o)
if sys.argv[1] != "hook":
    fn = lambda o, a, k: None
clock, took, started = time.perf_counter_ns, [], time.perf_counter_ns()
def timed(o, a, k):
    t = clock(); fn(o, a, k); took.append(clock() - t)
register_optimizer_step_post_hook(timed)
for i in range(3000):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if i % 10 == 0:
        print(f"step {i} loss {loss.item():.4f}", flush=True)
print("HOOK", statistics.median(took[500:]), (time.perf_counter_ns() - started) / 3000)
"""


def _hook_cost(runs: int) -> None:
    """The hook's optimizer post-hook, timed in place inside the trainer (medians of each process's steps)."""
    from hangwatch.supervise.job.autobeat import AUTOBEAT_DIR

    took: dict[str, list[float]] = {"hook": [], "empty": []}
    step: list[float] = []
    for _ in range(runs):
        for side, times in took.items():
            out = subprocess.run(
                [sys.executable, "-c", HOOK_TIMER, side, str(AUTOBEAT_DIR)],
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            ).stdout
            ns, per_step = out.rsplit("HOOK ", 1)[1].split()
            times.append(float(ns))
            step.append(float(per_step))
    hook, empty, whole = (statistics.median(v) for v in (took["hook"], took["empty"], step))
    for side, v in took.items():
        print(f"{side:6} hook: median {statistics.median(v) / 1000:.2f} us a step  {[round(x / 1000, 2) for x in v]}")
    print(
        f"the hook's own cost: {(hook - empty) / 1000:.2f} us a step, {100 * (hook - empty) / whole:.2f} % of a "
        f"{whole / 1000:.0f} us step"
    )


def _timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, timeout=60, check=True, env=env)
    return time.perf_counter() - t


def _hangwatch() -> list[str]:
    """The command as a user types it: the `hangwatch` script pip installed beside this interpreter (it imports the
    CLI directly), else `python -m hangwatch` (which imports runpy and importlib's machinery first: about 10 ms)."""
    script = Path(sys.executable).parent / "hangwatch"
    return [str(script)] if script.exists() else [sys.executable, "-m", "hangwatch"]


def _start_and_exit(runs: int, baseline_src: str | None) -> float:
    """`hangwatch run --run-dir D -- true` against `true` alone, alternated, as a user times it: the whole command,
    medians of one run of this script, and `python -m hangwatch` beside it. Its parts, timed the same way: the
    imports the command makes, the job through the exec shim (`python -S _exec.py true`), the guardian's start
    (`python -S _guard.py` of a job that is gone: it starts, sees no job, exits), and the rest (the run directory, the
    loop noticing the exit, the files at the end), what is left of the whole. Two ways to meet it: installed
    (bytecode beside the source, as `pip install` compiles it) and an editable checkout under
    PYTHONDONTWRITEBYTECODE=1 (no bytecode beside the source: hangwatch keeps its own under $XDG_CACHE_HOME,
    hangwatch/_bytecode.py), its first run and the rest."""
    package = Path(hangwatch.__file__).parent
    compileall.compile_dir(str(package), quiet=1)
    sides: dict[str, dict[str, str]] = {"this tree": {}}
    if baseline_src:
        compileall.compile_dir(str(Path(baseline_src) / "hangwatch"), quiet=1)
        sides["baseline"] = {"PYTHONPATH": str(Path(baseline_src).resolve())}
    parts = {
        "imports": [sys.executable, "-c", IMPORTS],
        "the job through the exec shim": [sys.executable, "-S", str(package / "_exec.py"), "true"],
        "the guardian's start": [sys.executable, "-S", str(package / "_guard.py"), str(os.getpid()), "999999999", "1"],
    }
    times: dict[str, list[float]] = {"true": [], **{k: [] for k in sides}, "-m": [], **{k: [] for k in parts}}
    with tempfile.TemporaryDirectory() as d:
        for i in range(runs):
            times["true"].append(_timed(["true"]))
            for name, extra in sides.items():
                cmd = [*_hangwatch(), "run", "--run-dir", f"{d}/{name[0]}{i}", "--", "true"]
                times[name].append(_timed(cmd, {**os.environ, **extra}))
            cmd = [sys.executable, "-m", "hangwatch", "run", "--run-dir", f"{d}/m{i}", "--", "true"]
            times["-m"].append(_timed(cmd))
            for name, cmd in parts.items():
                times[name].append(_timed(cmd))
        editable = _editable(package, runs, d)
    bare = statistics.median(times["true"])
    whole = statistics.median(times["this tree"])
    for name, runs_ in times.items():
        med = statistics.median(runs_)
        label = {
            "true": "`true`",
            "this tree": "`hangwatch run -- true`",
            "baseline": "the same, baseline",
            "-m": "`python -m hangwatch run -- true`",
        }.get(name, f"  part: {name}")
        print(f"{label:44} median {med:.3f} s  min {min(runs_):.3f} s")
    named = sum(statistics.median(times[k]) for k in ("imports", "the job through the exec shim"))
    print(f"{'  part: the rest (run dir, loop, files)':44} about {whole - named:.3f} s: the whole less the imports and")
    print(f"{'':44} the shim's job (the guardian starts beside them)")
    first, rest = editable
    print(f"{'editable, PYTHONDONTWRITEBYTECODE=1: first':44} {first:.3f} s (compiles, keeps the bytecode)")
    print(f"{'editable, PYTHONDONTWRITEBYTECODE=1: later':44} median {rest:.3f} s")
    if "baseline" in times:
        print(f"whole command, this tree / baseline: {whole / statistics.median(times['baseline']):.2f}")
    dash_m = statistics.median(times["-m"])
    print(
        f"`hangwatch run -- true`, the whole command: median {whole:.3f} s (target <= 0.15 s); "
        f"`python -m hangwatch ...` {dash_m:.3f} s; `true` {bare:.3f} s"
    )
    return max(whole, rest)


def _editable(package: Path, runs: int, tmp: str) -> tuple[float, float]:
    """A copy of the package with no bytecode beside it, a cache of its own, PYTHONDONTWRITEBYTECODE=1: the first
    run and the median of the rest."""
    import shutil

    src = Path(tmp) / "editable"
    shutil.copytree(package, src / "hangwatch", ignore=shutil.ignore_patterns("__pycache__"))
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "PYTHONDONTWRITEBYTECODE": "1",
        "XDG_CACHE_HOME": str(Path(tmp) / "cache"),
    }
    took = []
    for i in range(runs + 1):
        cmd = [sys.executable, "-m", "hangwatch", "run", "--run-dir", f"{tmp}/e{i}", "--", "true"]
        took.append(_timed(cmd, env))
    assert not list(src.rglob("__pycache__")), "bytecode was written beside the source"
    return took[0], statistics.median(took[1:])


if __name__ == "__main__":
    main()
