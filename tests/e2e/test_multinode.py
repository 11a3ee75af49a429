"""Two "nodes" on localhost: one hangwatch per node, each wrapping `torchrun --nnodes 2 --node-rank i`.

They find each other through a TCPStore next to the job's master port, name the culprit node and
rank in both incidents, and stop or restart both nodes' jobs together.

Here the tests that start real processes; those that start none are in tests/unit/test_multinode.py.
"""

from __future__ import annotations

import sys
import time

import pytest
from conftest import SCENARIOS, Run, two_free_ports

pytest.importorskip("torch")


@pytest.fixture
def nodes(tmp_path):
    runs = []
    for i in (0, 1):
        d = tmp_path / f"node{i}"
        d.mkdir()
        runs.append(Run(d))
    yield runs
    left = [pid for r in runs for pid in r.cleanup()]
    assert not left, f"processes left behind: {left}"


def _torchrun(node: int, port: int, script: str, *args: str) -> list[str]:
    return [
        "--",
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        "2",
        "--node-rank",
        str(node),
        "--nproc-per-node",
        "1",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(port),
        str(SCENARIOS / script),
        *args,
    ]


def _finish(runs: list[Run], timeout: float = 180.0) -> list[tuple[int, bytes, bytes]]:
    deadline = time.monotonic() + timeout
    out = []
    for r in runs:
        assert r.proc is not None
        o, e = r.proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        out.append((r.proc.returncode, o, e))
    return out


FAST = ["--min-stall", "1", "--startup-grace", "20", "--capture-window", "1", "--kill-grace", "3"]


# Both nodes naming the culprit node, rank and line, and both exiting 124: tests/{unit,e2e}/test_clusters.py runs
# that case through the Slurm recipe (test_the_sbatch_recipe_runs_two_nodes_and_requeues_only_on_124).


@pytest.mark.e2e
@pytest.mark.timeout(300)  # two attempts of two nodes, bounded at 240 s below
@pytest.mark.slow
def test_a_restart_restarts_both_nodes_and_both_resume(nodes, tmp_path):
    port = two_free_ports()
    for i, r in enumerate(nodes):
        r.start(*FAST, "--on-hang", "restart", *_torchrun(i, port, "dist_resume.py", str(tmp_path)))
    results = _finish(nodes, timeout=240)
    for i, ((code, out, err), r) in enumerate(zip(results, nodes, strict=True)):
        assert code == 0, err.decode()[-3000:]
        assert f"rank {i} resumed from step 3".encode() in out, out.decode()[-2000:]
        assert f"rank {i} done".encode() in out
        s = r.summary()
        assert (s["attempts"], s["exit_code"]) == (2, 0)
        ended = [e for e in r.events() if e["event"] == "nodes_ended"]
        assert [(e["attempt"], e["together"]) for e in ended] == [(1, True)], ended  # no node restarted early
