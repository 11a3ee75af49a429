"""Every launcher (issue [2/5]): the ranks found and named by rank, and the culprit at its line, whichever way the
job starts its ranks: `accelerate launch`, Lightning's own launcher (ddp: the script run again per device;
ddp_spawn: torch.multiprocessing.spawn), in `run` and in `inspect`. torchrun, mp.spawn and a job that starts its
ranks itself are in test_flight.py, test_inspect_scenarios.py and the zoo.

Every test here starts real processes; the launchers' command lines are told apart in
tests/unit/test_process_identity.py.
"""

from __future__ import annotations

import sys

import pytest
from conftest import SCENARIOS, _free_port, inspect_json, marker, root_cause

QUICK = ["--min-stall", "3", "--capture-window", "1", "--kill-grace", "2", "--on-hang", "kill"]


def _accelerate(script: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",  # on a machine with no GPU: N processes under torch's elastic agent, on gloo
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(_free_port()),
        str(SCENARIOS / script),
    ]


LAUNCHERS = {
    "accelerate": (lambda: _accelerate("dist_accelerate.py"), "dist_accelerate.py", "HANG-HERE:main"),
    "lightning-ddp": (
        lambda: [sys.executable, str(SCENARIOS / "dist_lightning.py"), "ddp"],
        "dist_lightning.py",
        "HANG-HERE",
    ),
    "lightning-ddp_spawn": (
        lambda: [sys.executable, str(SCENARIOS / "dist_lightning.py"), "ddp_spawn"],
        "dist_lightning.py",
        "HANG-HERE",
    ),
}


@pytest.mark.e2e
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.slow
def test_each_launchers_ranks_are_named_and_the_culprit_is_at_its_line(run, launcher):
    """Rank 0 alone calls a collective (a save or a log-dir lookup in rank-zero-only code) while rank 1 waits in
    another: both ranks are found, each by its rank, and the hang is named at rank 0's line."""
    pytest.importorskip("accelerate" if launcher == "accelerate" else "lightning")
    argv, script, tag = LAUNCHERS[launcher]
    r = run(*QUICK, "--", *argv())
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    incident = run.hang()  # Lightning's ddp starts rank 1 late: a first look may find rank 0 waiting for it
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck" and root["where"]["rank"] == 0, root
    assert (root["where"]["file"], root["where"]["line"]) == marker(script, tag), root["where"]
    ranks = sorted(p["rank"] for p in incident["processes"] if p["role"] == "rank")
    assert ranks == [0, 1], [(p["pid"], p["role"], p["rank"]) for p in incident["processes"]]
    assert "the recorders cannot say which side is wrong" in root["summary"], root["summary"]


@pytest.mark.e2e
def test_inspect_finds_the_ranks_of_accelerate_launch(start_job):
    """`hangwatch inspect LAUNCHER_PID` on a job started by `accelerate launch`: its ranks, named by rank."""
    pytest.importorskip("accelerate")
    job = start_job(_accelerate("dist_accelerate.py"), ready_count=2)
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck", root
    ranks = sorted(p["rank"] for p in incident["processes"] if p["role"] == "rank")
    assert ranks == [0, 1], [(p["pid"], p["role"], p["rank"]) for p in incident["processes"]]
    assert root["where"]["rank"] in (0, 1) and root["where"]["file"].endswith("dist_accelerate.py"), root["where"]
