"""Two "nodes" on localhost: one hangwatch per node, each wrapping `torchrun --nnodes 2 --node-rank i`.

They find each other through a TCPStore next to the job's master port, name the culprit node and
rank in both incidents, and stop or restart both nodes' jobs together.

Here the tests that start no process; those that do are in tests/e2e/test_multinode.py.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


# Both nodes naming the culprit node, rank and line, and both exiting 124: tests/{unit,e2e}/test_clusters.py runs
# that case through the Slurm recipe (test_the_sbatch_recipe_runs_two_nodes_and_requeues_only_on_124).


def test_coordination_refuses_a_peer_without_the_token(capsys):
    pytest.importorskip("torch")
    from conftest import _free_port

    from hangwatch.records.run import NodeLive
    from hangwatch.supervise.nodes.store import Coordinator
    from hangwatch.topology import Topology

    port = _free_port()
    host = Coordinator(Topology(2, 0, "127.0.0.1", port, "secret-A"), 10)
    host.publish(("live", 0), NodeLive(1.0, 1, "progressing", 7))
    friend = Coordinator(Topology(2, 1, "127.0.0.1", port, "secret-A"), 10)
    assert friend.read(("live", 0), NodeLive) == NodeLive(1.0, 1, "progressing", 7)
    stranger = Coordinator(Topology(2, 1, "127.0.0.1", port, "secret-B"), 10)
    err = capsys.readouterr().err
    assert stranger.lost and "belongs to a run with another token" in err and err.count("\n") == 1
    assert stranger.read(("live", 0), NodeLive) is None  # and never a crash
    # A message forged without the token under the right key is ignored too.
    host.store.set(host._key(("live", 1)), '{"mac": "00", "body": "{}"}')
    assert host.read(("live", 1), NodeLive) is None and host.refused


def test_every_node_derives_the_same_token_from_what_it_shares():
    from hangwatch.topology import coord_token

    a = ["torchrun", "--nnodes", "2", "--node-rank", "0", "--master-addr", "n0", "train.py"]
    b = ["torchrun", "--nnodes", "2", "--node-rank=1", "--master-addr", "n0", "train.py"]
    assert coord_token(a, {}, None)[0] == coord_token(b, {}, None)[0]
    assert coord_token(a, {"SLURM_JOB_ID": "77"}, None) == ("slurm:77", "SLURM_JOB_ID")
    assert coord_token(a, {"HANGWATCH_COORD_TOKEN": "t"}, "given")[0] == "given"


def test_a_kill_after_a_report_replaces_it_for_every_node():
    """Attempt 1 was reported hung (nothing done), then its ranks crashed on node 1: node 1's kill must
    reach node 0, whose ranks otherwise wait for ever; a report proposed after a kill changes nothing."""
    pytest.importorskip("torch")
    from conftest import _free_port

    from hangwatch.records.run import Decision
    from hangwatch.supervise.nodes.store import Coordinator
    from hangwatch.topology import Topology

    port = _free_port()
    node0 = Coordinator(Topology(2, 0, "127.0.0.1", port, "s"), 10)
    node1 = Coordinator(Topology(2, 1, "127.0.0.1", port, "s"), 10)
    assert node0.decide(1, Decision(0, "report", "code.deadlock")).action == "report"
    assert node1.decide(1, Decision(1, "kill", "distributed.peer_stuck")).action == "kill"
    assert node0.read(("decision", 1), Decision) == Decision(1, "kill", "distributed.peer_stuck")
    assert node0.decide(1, Decision(0, "report", "x")).action == "kill"
    assert node0.decide(1, Decision(0, "restart", "y")).action == "kill"  # the first terminal decision stays
