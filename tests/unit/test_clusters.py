"""Where clusters run: the exit-code contract (every row), the Slurm and Kubernetes recipes, the
scheduler's environment, and Prometheus metrics scraped over real HTTP.

Here the tests that start no process; those that do are in tests/e2e/test_clusters.py.
"""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import pytest
import yaml
from conftest import _free_port

from hangwatch.records.incident import Finding, Where
from hangwatch.recover.exitcode import (
    EXIT_HUNG_FINAL,
    EXIT_HUNG_REQUEUE,
    EXIT_STOPPED,
    EXIT_SUPERVISION_FAILED,
    Hang,
    earlier_hangs,
    hung_exit,
)
from hangwatch.topology import detect

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


# --- 1. the exit-code contract: the pure table ------------------------------------------------------------
def _finding(cause: str, file: str = "/t/train.py", line: int = 12) -> Finding:
    return Finding(cause, 0.9, "s", Where(1, None, None, file, line, "f"), (), ())


A = Hang("dataloader.worker_stuck", "/t/data.py:40")


@pytest.mark.parametrize(
    ("hang", "earlier", "left", "futile", "code", "said"),
    [
        (A, [], True, False, EXIT_HUNG_REQUEUE, "first time this cause was seen"),
        (A, [], None, False, EXIT_HUNG_REQUEUE, "first time"),  # no ladder at all: a transient may pass
        (A, [A], True, False, EXIT_HUNG_FINAL, "hung twice in a row"),
        (A, [A, Hang("code.deadlock", "/t/x.py:1")], True, False, EXIT_HUNG_REQUEUE, "seen 1 time(s) before"),
        (A, [Hang(A.cause, "/t/data.py:41")], True, False, EXIT_HUNG_REQUEUE, "elsewhere"),  # another place
        (A, [], False, False, EXIT_HUNG_FINAL, "every remedy for dataloader.worker_stuck was tried"),
        (A, [], True, True, EXIT_HUNG_FINAL, "no new progress"),
        (Hang("process.waits_for_input", "/t/login.py:3"), [], None, False, EXIT_HUNG_FINAL, "same prompt"),
    ],
)
def test_hung_exit_table(hang, earlier, left, futile, code, said):
    st = hung_exit(hang, earlier, left, futile)
    assert st.code == code and said in st.why, st
    assert st.requeue == (code == EXIT_HUNG_REQUEUE)


def test_the_codes_are_distinct_and_clear_of_shell_and_signal_codes():
    codes = {EXIT_HUNG_REQUEUE, EXIT_HUNG_FINAL, EXIT_STOPPED, EXIT_SUPERVISION_FAILED}
    assert len(codes) == 4 and all(2 < c < 126 for c in codes)  # 126/127: cannot run / not found; 128+N: signals
    assert Hang.of(_finding("code.deadlock")) == Hang("code.deadlock", "/t/train.py:12")


def test_earlier_hangs_are_read_from_a_reused_run_dir(tmp_path):
    for n, (verdict, cause) in enumerate(
        [("hung", "code.deadlock"), ("slow", "code.computing"), ("hung", "dataloader.worker_stuck")], 1
    ):
        d = tmp_path / "incidents" / f"{n:03d}"
        d.mkdir(parents=True)
        (d / "incident.json").write_text(
            json.dumps(
                {
                    "verdict": verdict,
                    "findings": [{"cause": cause, "where": {"file": "/t/a.py", "line": n, "function": "f"}}],
                }
            )
        )
    (tmp_path / "incidents" / "004").mkdir()
    (tmp_path / "incidents" / "004" / "incident.json").write_text("{not json")
    assert earlier_hangs(tmp_path) == [Hang("code.deadlock", "/t/a.py:1"), Hang("dataloader.worker_stuck", "/t/a.py:3")]


# --- 1. the exit-code contract: real runs -------------------------------------------------------------------


# --- 2. the scheduler's environment ----------------------------------------------------------------------
def test_slurm_environment_gives_node_rank_count_and_token():
    env = {
        "SLURM_NNODES": "4",
        "SLURM_NODEID": "2",
        "SLURM_JOB_ID": "991",
        "MASTER_ADDR": "gpu-a01",
        "MASTER_PORT": "29500",
    }
    topo = detect(["python", "train.py"], env)
    assert topo is not None
    assert (topo.nnodes, topo.node_rank, topo.endpoint) == (4, 2, "gpu-a01:29501")
    assert (topo.token, topo.token_source) == ("slurm:991", "SLURM_JOB_ID")


def test_pytorchjob_pet_variables_are_read_for_torchrun_only():
    """Kubeflow's PyTorchJob sets PET_*; torchrun reads them as its defaults, and so does hangwatch."""
    env = {"PET_NNODES": "2", "PET_NODE_RANK": "1", "PET_MASTER_ADDR": "train-master-0", "PET_MASTER_PORT": "23456"}
    topo = detect(["torchrun", "--nproc-per-node", "8", "train.py"], env)
    assert topo is not None and (topo.nnodes, topo.node_rank, topo.endpoint) == (2, 1, "train-master-0:23457")
    assert detect(["python", "train.py"], env) is None  # a plain python does not read PET_*
    topo = detect(["torchrun", "--nnodes", "3", "--node-rank", "0", "train.py"], env)  # arguments win
    assert topo is not None and (topo.nnodes, topo.node_rank) == (3, 0)


def test_an_indexed_job_index_is_the_node_rank():
    topo = detect(["python", "train.py"], {"JOB_COMPLETION_INDEX": "1", "NNODES": "2", "MASTER_ADDR": "train-0.train"})
    assert topo is not None and (topo.node_rank, topo.host) == (1, "train-0.train")


# --- 2. the recipes ---------------------------------------------------------------------------------------


def test_the_kubernetes_manifest_fails_the_job_on_every_code_but_124():
    docs = list(yaml.safe_load_all((EXAMPLES / "k8s" / "train-job.yaml").read_text()))
    job = next(d for d in docs if d["kind"] == "Job")
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"  # podFailurePolicy needs it
    (fail,) = [r for r in spec["podFailurePolicy"]["rules"] if r["action"] == "FailJob"]
    assert fail["onExitCodes"] == {"containerName": "train", "operator": "NotIn", "values": [EXIT_HUNG_REQUEUE]}
    (container,) = pod["containers"]
    cmd = container["command"]
    assert cmd[:2] == ["hangwatch", "run"] and "--" in cmd and fail["onExitCodes"]["containerName"] == container["name"]
    port = next(int(a.split("=")[1]) for a in cmd if a.startswith("--metrics-port="))
    assert {"name": "metrics", "containerPort": port} in container["ports"]
    master_port = next(int(a.split("=")[1]) for a in cmd if a.startswith("--master-port="))
    assert {"name": "hangwatch", "containerPort": master_port + 1} in container["ports"]  # the store
    assert "--node-rank=$(JOB_COMPLETION_INDEX)" in cmd and spec["completionMode"] == "Indexed"
    monitor = next(d for d in docs if d["kind"] == "PodMonitor")
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"


# --- 3. metrics --------------------------------------------------------------------------------------------


def test_the_grafana_dashboard_queries_only_metrics_hangwatch_serves():
    import re

    dash = json.loads((EXAMPLES / "grafana" / "hangwatch.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    served = {
        "hangwatch_info",
        "hangwatch_step",
        "hangwatch_seconds_since_progress",
        "hangwatch_state",
        "hangwatch_incidents_total",
        "hangwatch_restarts_total",
        "hangwatch_steps_per_second",
        "hangwatch_goodput_ratio",
        "hangwatch_cost_usd",
        "hangwatch_projected_cost_usd",
        "hangwatch_eta_seconds",
    }
    used = {m for e in exprs for m in re.findall(r"hangwatch_[a-z_]+", e)}
    assert used and used <= served, used - served
    assert served - {"hangwatch_info"} <= used | {"hangwatch_info"}, served - used  # every metric has a panel


# --- 4. scale: the short form of bench/scale.py ----------------------------------------------------------


def _rank_incident(n_ranks: int, workers: int = 2):
    """A synthetic incident: a launcher, n ranks each with DataLoader workers; rank 1 is elsewhere."""
    from hangwatch.records.incident import Action, FrameRecord, Incident, ProcessRecord, ThreadRecord, Verdict

    def frames(*names: str) -> tuple[FrameRecord, ...]:  # innermost first, as captured
        return tuple(reversed([FrameRecord(n, f"/job/{f}", int(line)) for n, f, line in (x.split(":") for x in names)]))

    common = ("<module>:train.py:120", "train:train.py:95")
    procs = [ProcessRecord(10, 1, "launcher", None, "S", 0.0, "torchrun train.py")]
    for rank in range(n_ranks):
        inner = ("load_shard:data.py:41",) if rank == 1 else ("all_reduce:train.py:88", "wait:distributed_c10d.py:2500")
        f = frames(*common, *inner)
        pid = 1000 + rank
        procs.append(
            ProcessRecord(
                pid,
                10,
                "rank",
                rank,
                "S",
                0.0 if rank != 1 else 99.0,
                "python train.py",
                threads=(ThreadRecord(pid, "main", True, f),),
                where=f[:1],
            )
        )
        for w in range(workers):
            wf = frames("_worker_loop:worker.py:300", "get:queues.py:100")
            wpid = 100_000 + rank * 10 + w
            procs.append(
                ProcessRecord(
                    wpid,
                    pid,
                    "dataloader_worker",
                    None,
                    "S",
                    0.0,
                    "python train.py",
                    threads=(ThreadRecord(wpid, "main", True, wf),),
                    where=wf[:1],
                )
            )
    return Incident(
        verdict=Verdict.HUNG,
        detected_at=1.8e9,
        last_progress=None,
        attempt=1,
        action=Action.REPORTED,
        processes=tuple(procs),
        findings=(),
    )


def test_the_rank_views_group_256_ranks_and_render_in_under_a_second(tmp_path):
    """Text, report.md and the page: groups of ranks, not 256 rows (nor 768 with their workers)."""
    from hangwatch.records.run import EventKind
    from hangwatch.report.html import render_html
    from hangwatch.report.markdown import render_markdown
    from hangwatch.report.run_report import load_run
    from hangwatch.report.text import render_text
    from hangwatch.supervise.books.rundir import RunDir

    incident = _rank_incident(256)
    rd = RunDir(tmp_path / "run")
    rd.event(EventKind.START, command=["torchrun"])
    rd.write_incident(incident)
    rd.close()
    t0 = time.perf_counter()
    text, md = io.StringIO(), io.StringIO()
    render_text(incident, text, color=False)
    render_markdown(incident, md)
    page = render_html(load_run(tmp_path / "run"), tmp_path / "run")
    took = time.perf_counter() - t0
    assert took < 1.0, f"{took:.2f} s"
    out = text.getvalue()
    assert "Ranks (256): ranks 0,2-255 in wait (distributed_c10d.py:2500) | rank 1 in load_shard (data.py:41)" in out
    assert (
        "ranks 0,2-255 (255 processes, pids 1000-1255), S, 0% CPU" in out
        and "beneath them: 510 dataloader_worker" in out
    )
    assert "rank 1 pid 1001" in out and out.count("dataloader_worker") <= 4  # rank 1's own two workers, and the group
    assert len(out.splitlines()) < 40, out
    table = [ln for ln in md.getvalue().splitlines() if ln.startswith("| ")]
    assert len(table) < 10 and any("255 processes" in ln for ln in table), table
    assert page.count("<li>") < 10 and "ranks 0,2-255 (255 processes" in page
    assert "Ranks (256)" in page


def test_merged_node_evidence_is_grouped_at_32_nodes():
    from hangwatch.diagnose.nodes import merge_nodes
    from hangwatch.diagnose.verdict import by_end
    from hangwatch.records.run import NodeSummary

    where = {"pid": 1, "rank": 0, "tid": 1, "file": "/job/train.py", "line": 88, "function": "train"}
    summaries = {}
    for node in range(32):
        ranks = []
        for local in range(8):
            rank = node * 8 + local
            culprit = rank == 249
            ranks.append(
                {
                    "rank": rank,
                    "pid": 100 + local,
                    "group": "elsewhere" if culprit else "collective",
                    "op": None if culprit else "all_reduce",
                    "where": {**where, "rank": rank},
                    "text": "stuck in load_shard at data.py:41" if culprit else "in all_reduce at train.py:88",
                }
            )
        summaries[node] = NodeSummary(f"gpu-{node:02d}", ranks, "hung", "distributed.peer_stuck")
    hit = by_end(merge_nodes(summaries, 32))
    assert hit is not None and hit.verdict.value == "hung"  # a node too old to say what rank 249 does: as before
    finding = hit.finding
    assert finding.where is not None and finding.where.rank == 249
    assert finding.evidence == (
        "ranks 0-248,250-255 on nodes 0-31: in all_reduce at train.py:88",
        "rank 249 on node 31 (gpu-31): stuck in load_shard at data.py:41",
    )


def test_a_rank_that_works_on_another_node_is_a_straggler_not_a_culprit():
    """Across nodes too: rank 0 on node 0 writes its download while rank 1 on node 1 waits at the barrier:
    waiting, never hung; the same rank measured blocked makes the job hung."""
    from hangwatch.diagnose.nodes import merge_nodes
    from hangwatch.diagnose.verdict import by_end
    from hangwatch.records.run import NodeSummary

    where = {"pid": 1, "rank": 0, "tid": 1, "file": "/job/train.py", "line": 20, "function": "download_weights"}
    work = {"kind": "work", "fact": "rank 0 (pid 1) moved 320 KiB in 1.0 s (writing weights.bin, now 40 MiB)"}

    def summaries(activity: str, proof: dict | None) -> dict[int, NodeSummary]:
        culprit = {
            "rank": 0,
            "pid": 1,
            "group": "elsewhere",
            "op": None,
            "where": where,
            "activity": activity,
            "text": "in download_weights (train.py:20)",
            "fact": proof["fact"] if proof else None,
            "proof": proof,
        }
        waiter = {
            "rank": 1,
            "pid": 2,
            "group": "collective",
            "op": "barrier",
            "where": {**where, "rank": 1},
            "text": "in barrier at train.py:22",
        }
        return {0: NodeSummary("a", [culprit], "waiting", "x"), 1: NodeSummary("b", [waiter], "hung", "x")}

    hit = by_end(merge_nodes(summaries("working", work), 2))
    assert hit is not None and (hit.verdict.value, hit.finding.cause) == ("waiting", "distributed.straggler")
    assert "working, not stuck" in hit.finding.summary and hit.finding.proves_work
    assert any("writing weights.bin" in e for e in hit.finding.evidence)
    stuck = by_end(merge_nodes(summaries("blocked", None), 2))
    assert stuck is not None and (stuck.verdict.value, stuck.finding.cause) == ("hung", "distributed.peer_stuck")
    # at work by its CPU alone (one call at full CPU, no bytes, no locals that advance): no proof of work, said so
    busy = by_end(merge_nodes(summaries("working", None), 2))
    assert busy is not None and busy.finding.cause == "distributed.straggler" and not busy.finding.proves_work
    assert "at work, not proven stuck" in busy.finding.summary, busy.finding.summary


def test_metrics_settings_come_from_toml_and_bad_ones_are_usage_errors(tmp_path):
    from hangwatch.errors import UsageError
    from hangwatch.supervise.config import build_config

    toml = tmp_path / "hangwatch.toml"
    toml.write_text(f'metrics_port = 9109\nmetrics_textfile = "{tmp_path}/hw.prom"\nrun_label = "exp-7"\n')
    cfg = build_config(["true"], {}, str(toml), use_pty=False)
    assert (cfg.metrics_port, cfg.metrics_textfile, cfg.run_label) == (9109, tmp_path / "hw.prom", "exp-7")
    assert build_config(["true"], {"metrics_port": "0"}, str(toml), use_pty=False).metrics_port == 0  # flag wins
    for bad in ("70000", "-1", "http"):
        with pytest.raises(UsageError, match="--metrics-port"):
            build_config(["true"], {"metrics_port": bad}, str(toml), use_pty=False)


def test_a_process_a_finding_points_at_or_one_in_d_state_is_never_hidden_in_a_group():
    import dataclasses
    import io

    from hangwatch.records.incident import Finding, Where
    from hangwatch.report.text import render_text

    inc = _rank_incident(64)
    procs = list(inc.processes)
    stuck = next(i for i, p in enumerate(procs) if p.pid == 100_000 + 7 * 10)  # a worker of rank 7
    dstate = next(i for i, p in enumerate(procs) if p.pid == 100_000 + 9 * 10 + 1)  # a worker of rank 9
    procs[dstate] = dataclasses.replace(procs[dstate], state="D")
    finding = Finding(
        "dataloader.worker_stuck", 0.9, "worker stuck", Where(procs[stuck].pid, 7, None, "/job/d.py", 4, "read"), (), ()
    )
    inc = dataclasses.replace(inc, processes=tuple(procs), findings=(finding,))
    buf = io.StringIO()
    render_text(inc, buf, color=False)
    out = buf.getvalue()
    assert f"pid {procs[stuck].pid}" in out and f"pid {procs[dstate].pid}  D" in out, out
    assert "rank 7 pid 1007" in out and "rank 9 pid 1009" in out
    assert "ranks 0,2-6,8,10-63 (61 processes" in out


def test_a_capture_request_is_read_again_until_this_node_answers_it():
    """The store's news counter lets a round skip reading; a request this node has not answered yet (it was
    busy capturing for itself) is still read every round until it has shared its summary."""
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.evidence import Evidence
    from hangwatch.records.incident import Verdict
    from hangwatch.records.run import CaptureRequest
    from hangwatch.supervise.nodes.protocol import NodeCoordination
    from hangwatch.supervise.nodes.store import Coordinator
    from hangwatch.topology import Topology

    port = _free_port()
    node0 = NodeCoordination(Coordinator(Topology(2, 0, "127.0.0.1", port, "t"), 10))
    node1 = NodeCoordination(Coordinator(Topology(2, 1, "127.0.0.1", port, "t"), 10))
    assert node0.tick(1, "progressing", 5, 1.0) is None and node0.tick(1, "progressing", 5, 1.5) is None
    ops = node0.coord.stats.ops["tick"]
    assert node0.tick(1, "progressing", 5, 2.0) is None and node0.coord.stats.ops["tick"] == ops + 1  # one message
    node1.coord.publish(("capture", 1), CaptureRequest(1, 2.0))
    assert not node0.coord.lost and not node1.coord.lost  # a store call that failed: each node carries on alone
    assert isinstance(node0.tick(1, "suspect", 5, 2.5), CaptureRequest)
    assert isinstance(node0.tick(1, "suspect", 5, 3.0), CaptureRequest)  # not answered yet: read again
    ev = Evidence(target_pid=1, root_pid=1, started_at=0.0, ended_at=1.0, clock_ticks=100, cpu_count=2, processes=())
    node0.share(1, ev, Diagnosis(Verdict.PROGRESSING, (_finding("code.computing"),)), 3.2, request=False)
    node0.tick(1, "progressing", 6, 3.5)
    assert node0.tick(1, "progressing", 6, 4.0) is None
    assert sorted(node1.coord.gather(1, 0.5)) == [0]  # one of two: at the deadline, only what is there
    node1.share(1, ev, Diagnosis(Verdict.HUNG, (_finding("code.deadlock"),)), 4.2, request=False)
    got = node1.coord.gather(1, 5.0)
    assert sorted(got) == [0, 1] and (got[0].verdict, got[1].verdict) == ("progressing", "hung")


def test_a_report_that_becomes_a_kill_is_news_to_the_other_nodes():
    """A "report" decision is replaced under the same key when a node later kills (a crash, a budget stop):
    the store's key count stays as it was, the news counter moves, and the other node's next round acts."""
    from hangwatch.records.run import Decision, OnHang
    from hangwatch.supervise.nodes.protocol import NodeCoordination
    from hangwatch.supervise.nodes.store import Coordinator
    from hangwatch.topology import Topology

    port = _free_port()
    node0 = NodeCoordination(Coordinator(Topology(2, 0, "127.0.0.1", port, "t"), 10))
    node1 = NodeCoordination(Coordinator(Topology(2, 1, "127.0.0.1", port, "t"), 10))
    assert node0.decide(1, Decision(0, OnHang.REPORT)).action == OnHang.REPORT
    assert node1.tick(1, "suspect", 5, 1.0) is None and node1.tick(1, "suspect", 5, 1.5) is None  # nothing to do
    keys = node0.coord.store.num_keys()
    assert node0.decide(1, Decision(0, OnHang.KILL, code=124)).action == OnHang.KILL
    assert node0.coord.store.num_keys() == keys  # the same key: the count alone would not tell
    got = node1.tick(1, "suspect", 5, 2.0)
    assert isinstance(got, Decision) and (got.action, got.by) == (OnHang.KILL, 0), got


def test_node_0_serves_the_store_until_every_node_that_joined_has_left():
    """Node 0 hosts the store: leaving first, it waits (bounded) for the nodes that joined, which may still
    have its decision to read; once they have left it goes at once. A node that never joined is not awaited."""
    from hangwatch.supervise.nodes.store import Coordinator
    from hangwatch.topology import Topology

    port = _free_port()
    node0 = Coordinator(Topology(3, 0, "127.0.0.1", port, "t"), 10)
    node1 = Coordinator(Topology(3, 1, "127.0.0.1", port, "t"), 10)  # node 2 never comes
    t = time.monotonic()
    waiter = threading.Thread(target=node0.leave, args=(10.0,))
    waiter.start()
    time.sleep(1.0)
    assert waiter.is_alive()  # node 1 joined and has not left: node 0 keeps serving
    node1.leave(10.0)
    waiter.join(5)
    assert not waiter.is_alive() and time.monotonic() - t < 3.0
    assert node0.stats.ops.get("membership", 0) >= 3 and not node0.lost


def test_the_agent_recipes_run_it_as_documented():
    """The DaemonSet and the systemd unit start `hangwatch agent` with options it has, see the node's processes,
    may read their stacks, and serve /metrics where the monitor looks."""
    from click.testing import CliRunner

    from hangwatch.commands.agent import agent

    docs = list(yaml.safe_load_all((EXAMPLES / "k8s" / "agent-daemonset.yaml").read_text()))
    ds = next(d for d in docs if d["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["hostPID"] is True and "SYS_PTRACE" in container["securityContext"]["capabilities"]["add"]
    script = container["command"][-1]
    args = script.split("exec hangwatch agent", 1)[1].split()
    port = int(args[args.index("--metrics-port") + 1])
    assert {"name": "metrics", "containerPort": port} in container["ports"]
    monitor = next(d for d in docs if d["kind"] == "PodMonitor")
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
    unit = (EXAMPLES / "systemd" / "hangwatch-agent.service").read_text()
    (exec_start,) = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    unit_args = exec_start.split("hangwatch agent", 1)[1].split()
    names = {p.opts[0] for p in agent.params if p.opts}
    for given in (args, unit_args):
        flags = {a for a in given if a.startswith("--")}
        assert flags <= names, flags - names
        assert given[given.index("--user") + 1].strip("'") == "*"
    ctx = agent.make_context("agent", [a.strip("'") for a in unit_args])  # parses: every value is of its kind
    assert ctx.params["users"] == ("*",) and ctx.params["metrics_port"] == 9110
    assert CliRunner().invoke(agent, ["--help"]).exit_code == 0
