"""Bench: a job flooding stdout, through `hangwatch run` vs `tee FILE` and `cat`.

The fair form (the default, issue 30): 1 GiB of 128-byte lines (written 512 lines at a time, the same way
under both), output.log and tee's file on tmpfs (/dev/shm), hangwatch against `tee FILE` in alternated
pairs (which goes first alternates too); the figure is the median of the pairs' ratios, with their range,
and each side's system time per GiB (hangwatch's less the job's own, measured alone in the same pairs).
Target: >= 0.8, output.log byte-exact.

    python bench/passthrough.py [--pairs 7] [--fair-mib 1024]            # the fair form
    python bench/passthrough.py --legacy [--mib 1024] [--line-mib 64]    # the older cat/tee/hangwatch rounds

Two jobs: one writing 64 KiB blocks, one writing 100-byte lines (each flushed, as `print(...,
flush=True)` does). hangwatch writes every byte to output.log and to its own stdout, like `tee
FILE`; `cat` only copies. Target (issue 11): hangwatch >= 0.8x the throughput of tee for both.
Every side's stdout goes to /dev/null; runs alternate so drift on the machine hits all alike.

    python bench/passthrough.py [--mib 1024] [--line-mib 64] [--rounds 3] [--breakdown]

--breakdown also times the pump's parts in this process on the 64 KiB flood (pipes): reads alone,
then + the write to output.log, + the console (/dev/null), + the parser's tail, and the Pump itself.

Each hangwatch time includes its own start and exit (~0.15-0.2 s here): floods this large keep that
fixed cost from hiding the pump's rate.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _jobs import FLOOD


def _pipe_into(job: list[str], consumer: list[str]) -> float:
    """``job | consumer > /dev/null``, without a shell."""
    t = time.perf_counter()
    producer = subprocess.Popen(job, stdout=subprocess.PIPE)
    sink = subprocess.Popen(consumer, stdin=producer.stdout, stdout=subprocess.DEVNULL)
    assert producer.stdout is not None
    producer.stdout.close()
    sink.wait(timeout=1800)
    producer.wait(timeout=60)
    return time.perf_counter() - t


def _hangwatch(job: list[str], run_dir: Path, env: dict[str, str] | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "hangwatch", "run", "--run-dir", str(run_dir), "--", *job],
        stdout=subprocess.DEVNULL,
        timeout=1800,
        check=True,
        env=env,
    )
    return time.perf_counter() - t


def bench(name: str, job: list[str], mib: int, rounds: int, d: Path, baseline_src: str | None = None) -> float:
    """Median times of cat, tee and hangwatch on ``job`` (and of another checkout's hangwatch, given its
    src/); returns the hangwatch/tee throughput ratio."""
    import os

    cats, tees, hws, olds = [], [], [], []
    exact = True
    expected = mib * 2**20
    for i in range(rounds):
        cats.append(_pipe_into(job, ["cat"]))
        tee_file = d / f"tee{i}.log"
        tees.append(_pipe_into(job, ["tee", str(tee_file)]))
        tee_file.unlink()
        run_dir = d / f"{name}{i}"
        hws.append(_hangwatch(job, run_dir))
        log = run_dir / "output.log"
        exact = exact and log.stat().st_size == expected
        log.unlink()
        if baseline_src:
            olds.append(_hangwatch(job, d / f"{name}-old{i}", {**os.environ, "PYTHONPATH": baseline_src}))
            (d / f"{name}-old{i}" / "output.log").unlink()
    cat, tee, hw = (statistics.median(x) for x in (cats, tees, hws))
    print(f"{name}: {mib} MiB")
    for label, t, runs in (("cat", cat, cats), ("tee FILE", tee, tees), ("hangwatch run", hw, hws)):
        print(f"  {label:14} median {t:6.2f} s {mib / t:7.0f} MiB/s  {[f'{x:.2f}' for x in runs]}")
    if olds:
        old = statistics.median(olds)
        print(f"  {'baseline tree':14} median {old:6.2f} s {mib / old:7.0f} MiB/s  {[f'{x:.2f}' for x in olds]}")
        print(f"  ratio baseline tree/tee {tee / old:.2f}")
    print(f"  output.log byte count: {'exact' if exact else 'WRONG'}")
    print(f"  ratio hangwatch/tee {tee / hw:.2f}  hangwatch/cat {cat / hw:.2f}  (target: /tee >= 0.8)")
    return tee / hw if exact else 0.0


def _pumped(job: list[str], parts: str, log_path: Path) -> float:
    """The job's stdout read in this process until EOF, doing ``parts`` of the pump's work per chunk."""
    import os

    from hangwatch.supervise.job.launch import READ_SIZE, _widen_pipe
    from hangwatch.supervise.progress.counters import OutputTail

    tail = OutputTail()
    t = time.perf_counter()
    producer = subprocess.Popen(job, stdout=subprocess.PIPE)
    assert producer.stdout is not None
    fd = producer.stdout.fileno()
    _widen_pipe(fd)
    null = os.open(os.devnull, os.O_WRONLY)
    with open(log_path, "ab", buffering=0) as log:
        while data := os.read(fd, READ_SIZE):
            if "log" in parts:
                log.write(data)
            if "console" in parts:
                os.write(null, data)
            if "tail" in parts:
                tail.add(data, 0.0)
    os.close(null)
    producer.wait(timeout=60)
    return time.perf_counter() - t


def _pump(job: list[str], log_path: Path) -> float:
    """The job's stdout through hangwatch's own Pump (log, console, tail), in this process."""
    import os

    from hangwatch.supervise.job.launch import OutputLog, Pump, StatusLine, _widen_pipe
    from hangwatch.supervise.progress.counters import OutputTail

    tail = OutputTail()
    t = time.perf_counter()
    producer = subprocess.Popen(job, stdout=subprocess.PIPE)
    assert producer.stdout is not None
    fd = os.dup(producer.stdout.fileno())
    producer.stdout.close()
    _widen_pipe(fd)
    null = os.open(os.devnull, os.O_WRONLY)
    with open(log_path, "ab", buffering=0) as log:
        pump = Pump(fd, null, OutputLog(log), tail.add, StatusLine(enabled=False))
        pump.start()
        pump.join(600)
    os.close(null)
    producer.wait(timeout=60)
    return time.perf_counter() - t


def breakdown(job: list[str], mib: int, rounds: int, d: Path) -> None:
    """Where the pump's time goes, against tee on the same flood (medians, one run of this script)."""
    rows: dict[str, list[float]] = {}
    for i in range(rounds):
        for label, fn in (
            ("tee FILE", lambda p: _pipe_into(job, ["tee", str(p)])),
            ("reads only", lambda p: _pumped(job, "", p)),
            ("+ output.log", lambda p: _pumped(job, "log", p)),
            ("+ console", lambda p: _pumped(job, "log console", p)),
            ("+ parser tail", lambda p: _pumped(job, "log console tail", p)),
            ("Pump thread", lambda p: _pump(job, p)),
        ):
            path = d / f"b{i}.log"
            rows.setdefault(label, []).append(fn(path))
            path.unlink(missing_ok=True)
    tee = statistics.median(rows["tee FILE"])
    print(f"breakdown, 64 KiB blocks, {mib} MiB, in-process (no hangwatch start or exit):")
    for label, runs in rows.items():
        t = statistics.median(runs)
        print(f"  {label:14} median {t:6.2f} s {mib / t:7.0f} MiB/s  vs tee {tee / t:.2f}")


LINES128 = r"""
import os, sys
total = int(sys.argv[1]) << 20
line = b"y" * 127 + b"\n"
block = memoryview(line * 512)  # 64 KiB: 512 lines a write, under tee and hangwatch alike
left = total
while left:
    chunk = block[:min(len(block), left)]
    while chunk:
        chunk = chunk[os.write(1, chunk):]
    left -= min(len(block), left)
"""


def _wait4(p: subprocess.Popen[bytes]) -> tuple[float, float]:
    """(user, system) seconds of a child that ends now (its own and its reaped children's)."""
    import os

    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return ru.ru_utime, ru.ru_stime


def _timed_tee(job: list[str], path: Path) -> tuple[float, float, float]:
    t = time.perf_counter()
    producer = subprocess.Popen(job, stdout=subprocess.PIPE)
    sink = subprocess.Popen(["tee", str(path)], stdin=producer.stdout, stdout=subprocess.DEVNULL)
    assert producer.stdout is not None
    producer.stdout.close()
    _, jsys = _wait4(producer)
    _, tsys = _wait4(sink)
    return time.perf_counter() - t, tsys, jsys


def _timed_hw(job: list[str], run_dir: Path) -> tuple[float, float]:
    t = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "hangwatch", "run", "--run-dir", str(run_dir), "--", *job], stdout=subprocess.DEVNULL
    )
    _, hsys = _wait4(p)
    return time.perf_counter() - t, hsys


def fair(mib: int, pairs: int) -> float:
    """The fair form: the median of alternated pairs' tee/hangwatch time ratios."""
    import os

    base = Path("/dev/shm") if os.path.isdir("/dev/shm") else Path(tempfile.gettempdir())
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        d = Path(tmp)
        script = d / "lines.py"
        script.write_text(LINES128)
        job = [sys.executable, str(script), str(mib)]
        ratios, tee_sys, hw_sys, job_sys, exact = [], [], [], [], True
        for i in range(pairs):

            def run_tee() -> float:
                t, tsys, jsys = _timed_tee(job, d / "tee.log")
                exact_tee = (d / "tee.log").stat().st_size == mib << 20
                (d / "tee.log").unlink()
                tee_sys.append(tsys)
                job_sys.append(jsys)
                assert exact_tee
                return t

            def run_hw() -> float:
                nonlocal exact
                t, hsys = _timed_hw(job, d / "run")
                exact = exact and (d / "run" / "output.log").stat().st_size == mib << 20
                import shutil

                shutil.rmtree(d / "run")
                hw_sys.append(hsys)
                return t

            if i % 2 == 0:
                tt, th = run_tee(), run_hw()
            else:
                th, tt = run_hw(), run_tee()
            ratios.append(tt / th)
            print(f"  pair {i + 1}: tee {tt:.2f} s, hangwatch {th:.2f} s, ratio {tt / th:.2f}", flush=True)
    gib = mib / 1024
    js = statistics.median(job_sys)
    print(f"fair pass-through: {mib} MiB of 128-byte lines, {pairs} alternated pairs, files on {base}")
    print(
        f"  ratio hangwatch/tee: median {statistics.median(ratios):.2f} (pairs {min(ratios):.2f} to "
        f"{max(ratios):.2f}); target >= 0.8"
    )
    print(
        f"  system time per GiB: tee {statistics.median(tee_sys) / gib:.2f} s, hangwatch "
        f"{(statistics.median(hw_sys) - js) / gib:.2f} s (its job's own {js / gib:.2f} s taken out)"
    )
    print(f"  output.log byte count: {'exact' if exact else 'WRONG'}")
    return statistics.median(ratios) if exact else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=7, help="alternated tee/hangwatch pairs (the fair form)")
    ap.add_argument("--fair-mib", type=int, default=1024, help="MiB of 128-byte lines (the fair form)")
    ap.add_argument("--legacy", action="store_true", help="the older rounds: cat, tee and hangwatch on two floods")
    ap.add_argument("--mib", type=int, default=1024, help="MiB written in 64 KiB blocks")
    ap.add_argument("--line-mib", type=int, default=64, help="MiB written as 100-byte lines")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--breakdown", action="store_true", help="also time the pump's parts in this process")
    ap.add_argument(
        "--baseline-src",
        help="another checkout's src/ (a `git worktree` of an older commit): its hangwatch is timed in the same rounds",
    )
    args = ap.parse_args()
    if not args.legacy and not args.breakdown:
        ratio = fair(args.fair_mib, args.pairs)
        print("PASS" if ratio >= 0.8 else "UNDER TARGET")
        return
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        script = d / "flood.py"
        script.write_text(FLOOD)
        if args.breakdown:
            breakdown([sys.executable, str(script), str(args.mib), "65536"], args.mib, args.rounds, d)
        ratios = [
            bench(
                "64 KiB blocks",
                [sys.executable, str(script), str(args.mib), "65536"],
                args.mib,
                args.rounds,
                d,
                args.baseline_src,
            ),
            bench(
                "100-byte lines",
                [sys.executable, str(script), str(args.line_mib), "100"],
                args.line_mib,
                args.rounds,
                d,
                args.baseline_src,
            ),
        ]
    print("PASS" if min(ratios) >= 0.8 else "UNDER TARGET")


if __name__ == "__main__":
    main()
