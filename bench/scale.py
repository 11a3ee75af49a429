"""Bench: many nodes, one store. N simulated nodes on this machine, each a real `hangwatch run` of a
small job that steps and then waits at a barrier every node must reach (like a collective); the
hangwatches coordinate through one TCPStore. After a quiet spell, one node's job hangs.

Reported per node count: the time from the hang to every node having acted on the same decision
(target: --min-stall + 10 s), the store messages and bytes per node per round while nothing is wrong
and per node for the incident, each supervisor's CPU while nothing is wrong (target: < 2 % of a core),
and anything left running (target: nothing). The ratio is the figure at N nodes against 2 nodes,
measured in the same run: flat is 1.0.

    python bench/scale.py [--nodes 2,8,32] [--min-stall 5]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from _jobs import free_port

JOB = Path(__file__).resolve().parent.parent / "tests" / "scenarios" / "scale_node.py"


def _events(run_dir: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(ln) for ln in (run_dir / "events.jsonl").read_text().splitlines() if ln.strip()]
    except OSError:
        return []


def _step(run_dir: Path) -> int:
    try:
        return int(json.loads((run_dir / "summary.json").read_text()).get("last_step") or 0)
    except (OSError, ValueError):
        return 0


def _leftovers(work: Path, supervisors: list[subprocess.Popen[bytes]]) -> list[int]:
    """Processes of any node still running: the supervisors, and anything carrying a node's run dir."""
    left = [p.pid for p in supervisors if p.poll() is None]
    root = str(work.resolve())
    for q in psutil.process_iter():
        try:
            if q.environ().get("HANGWATCH_RUN_DIR", "").startswith(root):
                left.append(q.pid)
        except psutil.Error:
            continue
    return left


def run_scale(
    nodes: int, min_stall: float, work: Path, idle_s: float = 10.0, interval: float = 0.5, timeout_s: float = 300.0
) -> dict[str, Any]:
    """Run N nodes until one hangs and every node has acted; the figures (see the module's docstring)."""
    work.mkdir(parents=True, exist_ok=True)
    barrier, hang_file = work / "barrier", work / "hang-now"
    barrier.mkdir(exist_ok=True)
    port, token, culprit = free_port(), secrets.token_hex(8), nodes - 1
    procs: list[subprocess.Popen[bytes]] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANGWATCH_")}
    try:
        for i in range(nodes):
            run_dir = work / f"node{i}"
            cmd = [
                sys.executable,
                "-m",
                "hangwatch",
                "run",
                "--run-dir",
                str(run_dir),
                "--coord",
                f"127.0.0.1:{port}",
                "--nodes",
                str(nodes),
                "--node-rank",
                str(i),
                "--coord-token",
                token,
                "--min-stall",
                str(min_stall),
                "--capture-window",
                "1",
                "--kill-grace",
                "3",
                "--startup-grace",
                str(timeout_s),
                "--on-hang",
                "kill",
                "--no-autobeat",
                "--",
                sys.executable,
                str(JOB),
                "--node",
                str(i),
                "--nodes",
                str(nodes),
                "--dir",
                str(barrier),
                "--interval",
                str(interval),
                "--hang-node",
                str(culprit),
                "--hang-file",
                str(hang_file),
            ]
            err = open(work / f"node{i}.err", "wb")  # noqa: SIM115 - closed with the process
            procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True))
            err.close()
            if i == 0:
                time.sleep(1.0)  # node 0 hosts the store
        started = time.monotonic()
        deadline = started + timeout_s
        while min(_step(work / f"node{i}") for i in range(nodes)) < 3:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"the {nodes} nodes did not all progress; see {work}/node*.err")
            time.sleep(0.5)
        steady_after = time.monotonic() - started
        # Nothing wrong: each supervisor's own CPU (not its job's) over idle_s.
        ps = [psutil.Process(p.pid) for p in procs]
        before = [sum(q.cpu_times()[:2]) for q in ps]
        t0 = time.monotonic()
        time.sleep(idle_s)
        after = [sum(q.cpu_times()[:2]) for q in ps]
        wall = time.monotonic() - t0
        cpu = [100.0 * (b - a) / wall for a, b in zip(before, after, strict=True)]
        hang_file.write_text("now")
        for p in procs:
            p.wait(timeout=max(1.0, deadline + 120 - time.monotonic()))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
    hung_at = float((barrier / "hung_at").read_text())
    acted, decisions, stats, codes = [], set(), [], []
    for i, p in enumerate(procs):
        ev = _events(work / f"node{i}")
        term = [e for e in ev if e["event"] == "terminate"]
        acted.append(term[0]["at"] - hung_at if term else None)
        remote = [e for e in ev if e["event"] == "remote_decision"]
        mine = [e for e in ev if e["event"] == "incident" and e.get("verdict") == "hung"]
        decisions.add(remote[0]["cause"] if remote else mine[0]["cause"] if mine else None)
        st = next((e for e in ev if e["event"] == "coord_stats"), {})
        stats.append(st)
        codes.append(p.returncode)
    done = [a for a in acted if a is not None]
    rounds = [max(1, s.get("rounds", 1)) for s in stats]
    return {
        "nodes": nodes,
        "min_stall": min_stall,
        "steady_after_s": round(steady_after, 1),
        "acted": len(done),
        "act_first_s": round(min(done), 2) if done else None,
        "act_last_s": round(max(done), 2) if done else None,
        "target_s": min_stall + 10,
        "decisions": sorted(str(d) for d in decisions),
        "exit_codes": sorted(set(codes)),
        "tick_ops_per_round": round(sum(s.get("tick_ops_per_round", 0) for s in stats) / nodes, 2),
        "tick_bytes_per_round": round(sum(s.get("tick_bytes_per_round", 0) for s in stats) / nodes, 1),
        "incident_ops_per_node": round(sum(s.get("ops", {}).get("incident", 0) for s in stats) / nodes, 1),
        "incident_bytes_per_node": round(sum(s.get("bytes", {}).get("incident", 0) for s in stats) / nodes),
        "rounds_per_node": round(sum(rounds) / nodes),
        "cpu_idle_mean_pct": round(sum(cpu) / nodes, 2),
        "cpu_idle_max_pct": round(max(cpu), 2),
        "left": _leftovers(work, procs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="2,32", help="node counts, comma-separated; the first is the baseline")
    ap.add_argument("--min-stall", type=float, default=5.0)
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of nothing wrong to measure CPU over")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="hw-scale-") as tmp:
        for n in (int(x) for x in args.nodes.split(",")):
            r = run_scale(n, args.min_stall, Path(tmp) / f"n{n}", idle_s=args.idle)
            results.append(r)
            print(json.dumps(r), flush=True)
    base = results[0]
    print(
        f"\n{'nodes':>5} {'acted':>5} {'first s':>8} {'last s':>7} {'target':>6} {'ops/rnd':>7} {'B/rnd':>6} "
        f"{'inc ops':>7} {'inc B':>7} {'cpu%':>5} {'cpu% max':>8} {'left':>4} decision"
    )
    for r in results:
        print(
            f"{r['nodes']:>5} {r['acted']:>5} {r['act_first_s']:>8} {r['act_last_s']:>7} {r['target_s']:>6} "
            f"{r['tick_ops_per_round']:>7} {r['tick_bytes_per_round']:>6} {r['incident_ops_per_node']:>7} "
            f"{r['incident_bytes_per_node']:>7} {r['cpu_idle_mean_pct']:>5} {r['cpu_idle_max_pct']:>8} "
            f"{len(r['left']):>4} {','.join(r['decisions'])}"
        )
    for r in results[1:]:

        def ratio(k: str, r: dict[str, Any] = r) -> str:
            return f"{r[k] / base[k]:.2f}" if base[k] else "-"

        print(
            f"ratio {r['nodes']} nodes / {base['nodes']}: ops per round {ratio('tick_ops_per_round')}, bytes per "
            f"round {ratio('tick_bytes_per_round')}, incident ops per node {ratio('incident_ops_per_node')}, "
            f"idle CPU {ratio('cpu_idle_mean_pct')}, time to act {ratio('act_last_s')}"
        )


if __name__ == "__main__":
    main()
