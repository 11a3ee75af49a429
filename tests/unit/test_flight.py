"""Every rank's collectives from torch's flight recorder (issue [2/5]): real torchrun jobs on gloo, each rank
serving torch's worker server on a unix socket, read at the stall; the recorder's analysis on recorded dumps,
NCCL's format included.

Here the tests that start no process; those that do are in tests/e2e/test_flight.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

# Recorded on an H200 (tests/fixtures/gpu/h200/job.py `nccl_behind`): NCCL's own recorder of one rank.
NCCL_DUMP = (
    Path(__file__).resolve().parents[1] / "fixtures" / "gpu" / "h200" / "nccl-all-reduce-queued-behind-a-kernel.json"
)


# --- the analysis on dumps ---------------------------------------------------------------------------------------
def _dump(entries: list[tuple[int, str, bool, str]], state_done: str = "completed") -> str:
    """A recorder dump in torch's format: (seq, op, done, state when not done)."""
    return json.dumps(
        {
            "version": "2.10",
            "pg_config": {},
            "pg_status": {},
            "entries": [
                {
                    "collective_seq_id": seq,
                    "p2p_seq_id": 0,
                    "profiling_name": f"nccl:{op}",
                    "pg_id": 0,
                    "process_group": ["0", "default_pg"],
                    "state": state_done if done else st,
                    "retired": done,
                    "input_sizes": [[1048576]],
                    "output_sizes": [[1048576]],
                    "input_dtypes": ["Float"],
                    "time_created_ns": 1_795_000_000_000_000_000 + seq,
                    "timeout_ms": 600000,
                    "frames": [{"name": "train", "filename": "/job/train.py", "line": 88}],
                }
                for seq, op, done, st in entries
            ],
        }
    )


def _ranks(dumps: dict[int, str]):
    from hangwatch.capture.flight import RawDump, parse_dump
    from hangwatch.diagnose.recorders import rank_collectives

    return [
        rank_collectives(r, parse_dump(RawDump(100 + r, r, text, "hangwatch_fr", None, 0.01)))
        for r, text in sorted(dumps.items())
    ]


def test_a_real_nccl_dump_reads_the_collective_queued_behind_a_kernel():
    """Recorded on an H200 (torch 2.11.0+cu130, NCCL 2.28.9, tests/fixtures/gpu/h200/job.py `nccl_behind`): three
    all_reduces and a barrier completed, then an all_reduce queued behind a long kernel while the host waits."""
    from hangwatch.capture.flight import RawDump, parse_dump

    path = NCCL_DUMP
    rec = parse_dump(RawDump(597, 0, path.read_text(), "hangwatch_fr", None, 0.01))
    assert rec.answered and rec.version == "2.10" and rec.has_frames
    ops = [(c.seq, c.op, c.backend, c.state, c.retired) for c in rec.entries]
    assert ops == [
        (1, "all_reduce", "nccl", "completed", True),
        (2, "all_reduce", "nccl", "completed", True),
        (3, "all_reduce", "nccl", "completed", True),
        (4, "all_reduce_barrier", "nccl", "completed", True),
        (5, "all_reduce", "nccl", "scheduled", False),
    ]
    last = rec.entries[-1]
    assert last.frame is not None and (last.frame.file, last.frame.line) == ("/gpucheck/job.py", 63)
    assert last.input_sizes == ((1048576,),) and last.timeout_ms == 600000
    (st,) = rec.status
    assert (st.last_enqueued, st.last_started, st.last_completed) == (5, None, 4)  # -1: none started


def test_nccl_groups_are_read_from_their_own_recorder_and_merged_with_the_others():
    """On the H200 an NCCL job's generic recorder (`fr_trace_json`, `_dump_fr_trace`) was empty: its entries are
    in NCCL's own (`dump_nccl_trace_json`, `_dump_nccl_trace`). Both are read and merged."""
    from hangwatch.capture.flight import RawDump, _merged, parse_dump

    empty = '{"version": "2.10", "pg_config": {}, "comm_lib_version": "", "pg_status": {}, "entries": []}'
    nccl = NCCL_DUMP
    rec = parse_dump(RawDump(597, 0, _merged(empty, nccl.read_text()), "fr_trace_json", None, 0.01))
    assert [c.seq for c in rec.entries] == [1, 2, 3, 4, 5] and rec.version == "2.10"
    assert [(s.group, s.last_completed) for s in rec.status] == [("0", 4)]
    assert _merged(empty, "not json") == empty and _merged("not json", nccl.read_text()) == nccl.read_text()


def test_a_group_on_gloo_and_nccl_is_two_groups_each_numbered_on_its_own():
    """``backend="cpu:gloo,cuda:nccl"``: the default group's gloo collectives and its NCCL ones are numbered
    apart, in two recorders; merged, they stay apart (seq 1 of each is not one collective)."""
    from hangwatch.capture.flight import RawDump, _merged, parse_dump

    nccl = NCCL_DUMP
    gloo = json.loads(
        _dump([(1, "all_reduce", True, ""), (2, "barrier", False, "scheduled")]).replace("nccl:", "gloo:")
    )
    gloo["pg_status"] = {
        "0": {"last_enqueued_collective": 2, "last_started_collective": 2, "last_completed_collective": 1}
    }
    merged = json.loads(_merged(json.dumps(gloo), nccl.read_text()))
    assert set(merged["pg_status"]) == {"0", "0 (nccl)"}
    rec = parse_dump(RawDump(597, 0, json.dumps(merged), "fr_trace_json+dump_nccl_trace_json", None, 0.01))
    groups = {(c.group, c.backend) for c in rec.entries}
    assert groups == {("default_pg", "gloo"), ("default_pg (nccl)", "nccl")}
    assert [c.seq for c in rec.entries if c.backend == "nccl"] == [1, 2, 3, 4, 5]
    assert not rec.has_frames  # the C++ handlers answered: no frames of the job's Python


def test_nccl_dumps_name_the_rank_that_never_entered_the_collective():
    from hangwatch.diagnose.collectives import explain
    from hangwatch.diagnose.recorders import analyze
    from hangwatch.diagnose.verdict import by_end

    ok = [(s, "all_reduce", True, "") for s in range(1, 58)]
    dumps = {r: _dump([*ok, (58, "all_reduce", False, "started")]) for r in (0, 1, 3)}
    dumps[2] = _dump(ok)
    stall = analyze(_ranks(dumps))
    assert stall is not None and (stall.seq, stall.waiting, stall.missing) == (58, [0, 1, 3], [2])
    hit = by_end(explain(stall, {}, None))  # the verdict stage judges the namer's end
    assert hit.finding.summary.startswith(
        "Rank 2 is not on this node and never entered all_reduce #58 (it last "
        "completed #57), while ranks 0-1,3 wait in all_reduce #58 (4.0 MiB, "
        "train.py:88) since "
    ), hit.finding.summary
    assert hit.verdict.value == "hung"


def test_a_collective_every_rank_entered_and_none_completed_is_the_transport():
    from hangwatch.diagnose.collectives import explain
    from hangwatch.diagnose.recorders import analyze

    ok = [(s, "all_reduce", True, "") for s in range(1, 10)]
    stall = analyze(_ranks({r: _dump([*ok, (10, "all_reduce", False, "started")]) for r in range(4)}))
    assert stall is not None and stall.missing == [] and stall.waiting == [0, 1, 2, 3]
    hit = explain(stall, {}, None)
    assert hit.finding.cause == "distributed.collective_stalled" and "transport" in hit.finding.summary
    from hangwatch.recover.exitcode import deterministic

    assert not deterministic(hit.finding)  # a network or device problem: a requeue may pass it


def test_a_collective_stalled_with_a_recorder_that_did_not_answer_says_only_what_was_read():
    """Three ranks' recorders read in all_reduce #10, none completed; rank 3's did not answer: "every rank entered,
    the transport stalled, not the code" would claim what was not read."""
    from hangwatch.capture.flight import RawDump, parse_dump
    from hangwatch.diagnose.collectives import explain
    from hangwatch.diagnose.recorders import analyze, rank_collectives

    ok = [(s, "all_reduce", True, "") for s in range(1, 10)]
    ranks = _ranks({r: _dump([*ok, (10, "all_reduce", False, "started")]) for r in range(3)})
    ranks.append(rank_collectives(3, parse_dump(RawDump(103, 3, None, None, "timed out after 3 s", 3.0))))
    stall = analyze(ranks)
    assert stall is not None and stall.silent == [3] and stall.missing == []
    said = explain(stall, {}, None).finding.summary
    assert said.startswith("Every rank whose recorder answered entered") and "not the code" not in said, said
    assert "the recorder of rank 3 did not answer, so whether it entered it was not read" in said, said


def test_a_mismatch_at_the_same_sequence_number_is_proven():
    from hangwatch.diagnose.collectives import explain
    from hangwatch.diagnose.recorders import analyze
    from hangwatch.diagnose.verdict import by_end

    ok = [(s, "all_reduce", True, "") for s in range(1, 5)]
    dumps = {r: _dump([*ok, (5, "all_reduce", False, "scheduled")]) for r in (0, 1)}
    dumps[2] = _dump([*ok, (5, "broadcast", False, "scheduled")])
    stall = analyze(_ranks(dumps))
    assert stall is not None and stall.mismatch == {"all_reduce [[1048576]]": [0, 1], "broadcast [[1048576]]": [2]}
    hit = explain(stall, {}, None)
    assert hit.verdict is None and not hit.finding.proves_hang  # the namer names; the verdict stage proves
    hit = by_end(hit)
    assert hit.finding.proves_hang and "Rank 2 took another path" in hit.finding.summary


def test_entries_of_an_earlier_process_group_are_left_out():
    from hangwatch.capture.flight import RawDump, parse_dump

    text = _dump([(1, "all_reduce", True, ""), (2, "all_reduce", False, "scheduled")])
    since = 1_795_000_000.0 + 1.5e-9  # between the two entries' creation
    record = parse_dump(RawDump(1, 0, text, "hangwatch_fr", None, 0.01), since=since - 1e-9)
    assert [e.seq for e in record.entries] == [1, 2]
    record = parse_dump(RawDump(1, 0, text, "hangwatch_fr", None, 0.01), since=1_795_000_001.0)
    assert record.entries == ()


def test_a_rank_that_did_not_answer_is_evidence():
    from hangwatch.capture.flight import RawDump, parse_dump
    from hangwatch.diagnose.recorders import analyze, rank_collectives

    ranks = _ranks(
        {
            0: _dump([(1, "all_reduce", True, ""), (2, "all_reduce", False, "scheduled")]),
            1: _dump([(1, "all_reduce", True, ""), (2, "all_reduce", False, "scheduled")]),
        }
    )
    ranks.append(rank_collectives(2, parse_dump(RawDump(102, 2, None, None, "timed out", 2.0))))
    stall = analyze(ranks)
    assert stall is not None and stall.silent == [2] and stall.missing == []


def test_across_nodes_the_recorders_are_merged_through_the_summaries():
    from hangwatch.diagnose.nodes import merge_nodes
    from hangwatch.diagnose.verdict import by_end
    from hangwatch.records.run import NodeSummary

    ok = [(s, "all_reduce", True, "") for s in range(1, 12)]
    rcs = {
        r.rank: r
        for r in _ranks(
            {
                0: _dump([*ok, (12, "all_reduce", False, "started")]),
                1: _dump([*ok, (12, "all_reduce", False, "started")]),
                2: _dump(ok),
                3: _dump([*ok, (12, "all_reduce", False, "started")]),
            }
        )
    }
    where = {"pid": 7, "rank": 2, "tid": 7, "file": "/job/data.py", "line": 41, "function": "load"}

    def summary(rank: int) -> dict:
        return {
            "rank": rank,
            "pid": 100 + rank,
            "group": "elsewhere",
            "op": None,
            "text": "in load (data.py:41)",
            "where": {**where, "rank": rank},
            "activity": "blocked",
            "fact": None,
            "proof": None,
            "fr": rcs[rank].to_dict(),
        }

    summaries = {
        0: NodeSummary("a", [summary(0), summary(1)], "hung", "x"),
        1: NodeSummary("b", [summary(2), summary(3)], "hung", "x"),
    }
    hit = by_end(merge_nodes(summaries, 2))
    assert hit is not None and hit.finding.where is not None and hit.finding.where.rank == 2
    assert hit.finding.summary.startswith(
        "Rank 2 on node 1 is stuck in load (data.py:41) and never entered all_reduce #12 (it last completed #11)"
    ), hit.finding.summary
    assert "across nodes: rank 2 on node 1" in hit.finding.evidence[-1]


@pytest.mark.parametrize(
    ("state", "proves_hang", "verdict"),
    [
        ("working", False, "waiting"),
        ("asleep", False, "slow"),
        ("wakes", False, "slow"),
        ("brief", False, "slow"),
        ("idle", False, "hung"),
        ("blocked", False, "hung"),
        ("blocked", True, "hung"),
        ("long_sleep", True, "hung"),
        ("gone", False, "slow"),  # its exit ends the collective the others wait in
        ("unknown", False, "hung"),
    ],
)
def test_a_rank_others_wait_for_is_judged_once_by_what_it_was_measured_doing(state, proves_hang, verdict):
    """[1/5]: one verdict from what the waiters wait for. The same rank's end, as its node measured it, makes the
    same verdict through both namers that read it (the recorders' merge and the stacks' merge across nodes), and only
    the verdict stage makes it: each namer names (no verdict, no proof) and chooses its words by it, a straggler
    only where the rank does not hold the others up, "stuck" only where it was measured so."""
    from hangwatch.diagnose.nodes import merge_nodes
    from hangwatch.diagnose.verdict import by_end
    from hangwatch.records.run import NodeSummary

    ok = [(s, "all_reduce", True, "") for s in range(1, 12)]
    pending = [*ok, (12, "all_reduce", False, "started")]
    rcs = {r.rank: r for r in _ranks({0: _dump(pending), 1: _dump(ok)})}
    where = {"pid": 7, "rank": 1, "tid": 7, "file": "/job/data.py", "line": 41, "function": "load"}
    fact = "rank 1 (pid 7) sleeps at load (data.py:41)" if proves_hang or state == "working" else None
    culprit = {
        "rank": 1,
        "pid": 7,
        "group": "elsewhere",
        "op": None,
        "text": "in load (data.py:41)",
        "where": where,
        "state": state,
        "fact": fact,
        "proves_hang": proves_hang,
        "proves_work": state == "working",
    }
    waiter = {"rank": 0, "pid": 6, "group": "collective", "op": "all_reduce", "text": "in all_reduce at train.py:88"}
    waiter["where"] = {**where, "rank": 0, "pid": 6, "file": "/job/train.py", "line": 88}
    for with_recorders in (True, False):
        c, w = dict(culprit), dict(waiter)
        if with_recorders:
            c["fr"], w["fr"] = rcs[1].to_dict(), rcs[0].to_dict()
        named = merge_nodes({0: NodeSummary("a", [w], "hung", "x"), 1: NodeSummary("b", [c], "hung", "x")}, 2)
        assert named is not None and named.verdict is None and named.finding.proof is None
        hit = by_end(named)
        assert hit.verdict is not None and hit.verdict.value == verdict, (with_recorders, hit.finding.summary)
        assert (hit.finding.cause == "distributed.straggler") == (verdict != "hung"), hit.finding.summary
        said_stuck = "stuck" in hit.finding.summary.replace("not stuck", "")
        assert said_stuck == (state == "blocked"), hit.finding.summary  # measured so, not only holding them up
        assert hit.finding.proves_hang == proves_hang and hit.finding.proves_work == (state == "working")


def test_across_nodes_the_proven_rank_leads_and_only_what_was_measured_stuck_is_said_stuck():
    """Two ranks away from the collective: rank 1 idle (it holds the others up, unproven), rank 3 blocked with a proof.
    The proven one leads (its place and its proof), and the idle one is not said stuck; a node of an older version
    (``activity`` and ``proof``) reads the same summaries the same way, with the proof's own words."""
    from hangwatch.diagnose.ends import End
    from hangwatch.diagnose.nodes import merge_nodes
    from hangwatch.diagnose.verdict import by_end
    from hangwatch.records.run import NodeSummary

    def rank(r: int, state: str, fact: str | None, proven: bool) -> dict:
        where = {"pid": 10 + r, "rank": r, "tid": 10 + r, "file": f"/job/load{r}.py", "line": 5, "function": "load"}
        end = End(state, fact, proves_hang=proven)
        return {
            "rank": r,
            "pid": 10 + r,
            "group": "elsewhere",
            "op": None,
            "text": f"in load (load{r}.py:5)",
            "where": where,
            "activity": state,
            "proof": end.old_proof(),
            **end.to_dict(),
        }

    waiter = {
        "rank": 0,
        "pid": 10,
        "group": "collective",
        "op": "barrier",
        "text": "in barrier at train.py:9",
        "where": {"pid": 10, "rank": 0, "tid": 10, "file": "/job/train.py", "line": 9, "function": "train"},
    }
    held = "rank 3 (pid 13) waits on a lock at load (load3.py:5), and nothing can release it"
    summaries = {
        0: NodeSummary("a", [waiter, rank(1, "idle", None, False)], "hung", "x"),
        1: NodeSummary("b", [rank(3, "blocked", held, True)], "hung", "x"),
    }
    hit = by_end(merge_nodes(summaries, 2))
    assert hit.verdict is not None and hit.verdict.value == "hung"
    assert hit.finding.where is not None and hit.finding.where.rank == 3 and hit.finding.proves_hang
    assert hit.finding.summary.startswith("Rank 3 on node 1 is stuck in load (load3.py:5)"), hit.finding.summary
    assert "rank 1" not in hit.finding.summary.lower() and hit.finding.proof.fact == held
    old = {k: v for k, v in rank(3, "blocked", "rank 3 is blocked (futex) at 0% CPU", True).items()}
    old.pop("state"), old.pop("proves_hang"), old.pop("proves_work")
    old["proof"] = {"kind": "hang", "fact": held}  # an older node: the proof's words, not the state's
    assert End.from_dict(old) == End("blocked", held, proves_hang=True)
    assert End.from_dict({"activity": "asleep", "proof": {"kind": "hang", "fact": None}}).proves_hang is False


@pytest.mark.parametrize(
    ("one", "two", "lead", "proven"),
    [
        (
            ("working", "its loop advances: i 3 -> 9", False, True),
            ("stopped", "rank 2 is stopped", True, False),
            2,
            True,
        ),
        (
            ("asleep", None, False, False),
            ("blocked", "rank 2 waits on a lock nothing can release", True, False),
            2,
            True,
        ),
        (("blocked", "rank 1 is blocked", False, False), ("asleep", None, False, False), 1, False),
    ],
)
def test_of_ranks_that_never_entered_the_collective_the_one_that_holds_the_others_up_leads(one, two, lead, proven):
    """From the recorders, two ranks never entered the collective: the one that holds the others up is named (the
    proven one first), with its own place and proof, and only it is said stuck; the other is in the evidence."""
    from hangwatch.diagnose.collectives import explain, remote_info
    from hangwatch.diagnose.ends import End
    from hangwatch.diagnose.recorders import Pending, Stall
    from hangwatch.diagnose.verdict import by_end

    p = Pending(seq=5, op="allreduce", nbytes=4, at=0.0, line="train.py:88", sizes="[[1]]", timeout_s=600.0)

    def summary(rank: int, state: tuple) -> dict:
        end = End(state[0], state[1], proves_hang=state[2], proves_work=state[3])
        where = {
            "pid": 10 + rank,
            "rank": rank,
            "tid": None,
            "file": "/job/train.py",
            "line": 40 + rank,
            "function": "f",
            "code": None,
        }
        return {
            "rank": rank,
            "pid": 10 + rank,
            "group": "elsewhere",
            "op": None,
            "text": f"in f (train.py:{40 + rank})",
            "where": where,
            **end.to_dict(),
        }

    remote = {1: remote_info(summary(1, one), 1), 2: remote_info(summary(2, two), 2)}
    stall = Stall(
        group="0",
        seq=5,
        op="allreduce",
        waiting=[0, 3],
        missing=[1, 2],
        mismatch={},
        pending=p,
        at_seq={0: p, 3: p},
        done_by_missing={1: 4, 2: 4},
        silent=[],
    )
    hit = by_end(explain(stall, {}, None, remote))
    assert hit.verdict is not None and (hit.verdict.value, hit.finding.cause) == ("hung", "distributed.peer_stuck")
    assert hit.finding.where is not None and hit.finding.where.rank == lead and hit.finding.proves_hang == proven
    assert hit.finding.summary.startswith(f"Rank {lead} on node {lead} is stuck in f"), hit.finding.summary


def test_the_env_sets_the_recorder_only_where_the_user_did_not():
    from hangwatch.supervise.job.autobeat import autobeat_env

    on = autobeat_env({}, True, 1800.0)
    assert on["TORCH_FR_BUFFER_SIZE"] == "2000" and "TORCH_NCCL_TRACE_BUFFER_SIZE" not in on  # deprecated in 2.13
    mine = autobeat_env({"TORCH_NCCL_TRACE_BUFFER_SIZE": "10"}, True, 1800.0)
    assert "TORCH_FR_BUFFER_SIZE" not in mine and "TORCH_NCCL_TRACE_BUFFER_SIZE" not in mine
    assert autobeat_env({}, True, 1800.0, flight=False)["HANGWATCH_FLIGHT"] == "0"
    assert autobeat_env({}, False, 1800.0)["HANGWATCH_FLIGHT"] == "0"


def test_a_recorder_without_frames_takes_the_line_from_the_ranks_own_stack():
    """torch's C++ dump (what answers while our handler waits for the GIL, on a busy machine) has no frames: the
    collective a rank waits in is named at its line from the rank's stack (rank 0 in all_reduce at
    dist_peer.py:33, recorded); a rank whose stack is elsewhere gets no line rather than a wrong one."""
    from hangwatch.capture.flight import RawDump, parse_dump
    from hangwatch.diagnose.recorders import rank_collectives
    from hangwatch.diagnose.scene import Scene
    from hangwatch.evidence_io import evidence_from_dict

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "evidence"
    ev = evidence_from_dict(json.loads((fixture / "distributed_peer_stuck_names_culprit_rank.json").read_text()))
    views = {v.info.rank: v for v in Scene.of(ev).views if v.info.rank is not None and v.role.value == "rank"}
    bare = json.loads(_dump([(1, "all_reduce", True, ""), (2, "all_reduce", False, "scheduled")]))
    for e in bare["entries"]:
        del e["frames"]
    record = parse_dump(RawDump(100, 0, json.dumps(bare), "fr_trace_json", None, 0.01))
    assert rank_collectives(0, record).groups["default_pg"].pending.line is None
    pending = rank_collectives(0, record, views[0]).groups["default_pg"].pending
    assert pending is not None and pending.line == "dist_peer.py:33" and pending.lineno == 33, pending
    assert rank_collectives(1, record, views[1]).groups["default_pg"].pending.line is None  # in load_shard


# --- the ranks' collectives paired by call site ---------------------------------------------------------------
def _seq(*calls: str, start: int = 1) -> tuple:
    """A rank's recorded (seq, op, sizes, site) from ``"all_reduce@/job/train.py:30"`` strings (sizes [[4]])."""
    out = []
    for i, c in enumerate(calls):
        op, _, site = c.partition("@")
        out.append((start + i, op, "[]" if op == "barrier" else "[[4]]", site))
    return tuple(out)


R, B, W, X = (
    "all_reduce@/job/train.py:30",
    "barrier@/job/train.py:15",
    "all_reduce@/job/train.py:12",
    "all_reduce@/job/train.py:40",
)


def test_a_rank_one_collective_ahead_or_a_window_that_starts_later_is_not_a_skew():
    """Healthy: ranks that made the same calls, one of them a collective further (its next one already entered),
    or recorders whose windows start at different numbers (a ring buffer)."""
    from hangwatch.diagnose.alignment import align

    assert align({0: _seq(R, B, R, R), 1: _seq(R, B, R, R, B)}, hang_seq=5) is None
    assert align({0: _seq(B, R, R, start=2), 1: _seq(R, B, R, R)}, hang_seq=5) is None
    assert align({0: _seq(R, R, R)}, hang_seq=3) is None  # a group only one rank is in


def test_an_extra_call_is_named_by_the_pairs_one_off_after_it():
    from hangwatch.diagnose.alignment import SkewKind, align

    others = _seq(R, R, R, B)
    skew = align({0: others, 1: others, 2: _seq(R, X, R, R)}, hang_seq=4)
    assert skew is not None and (skew.kind, skew.seq, skew.culprits, skew.others, skew.off) == (
        SkewKind.EXTRA,
        2,
        (2,),
        (0, 1),
        1,
    )
    assert skew.culprit_call.site == "/job/train.py:40"
    assert skew.said().startswith("Rank 2 called all_reduce at train.py:40 as collective #2, which ranks 0-1 did not;")


def test_a_skipped_call_is_named_on_the_rank_that_skipped_it_at_the_line_it_skipped():
    from hangwatch.diagnose.alignment import SkewKind, align

    others = _seq(W, R, R, R, B)
    skew = align({0: others, 1: others, 2: _seq(R, R, R, B)}, hang_seq=4)
    assert skew is not None and (skew.kind, skew.culprits, skew.culprit_call.site) == (
        SkewKind.SKIPPED,
        (2,),
        "/job/train.py:12",
    )
    assert skew.said().startswith("Rank 2 never called all_reduce at train.py:12 (collective #1; ranks 0-1 did)")


def test_two_ranks_name_the_call_one_made_and_the_other_did_not():
    """With two ranks "rank 1 skipped it" and "rank 0 added it" are the same fact: the call one side made is named,
    on the rank that made it."""
    from hangwatch.diagnose.alignment import SkewKind, align

    skew = align({0: _seq(W, R, R, R), 1: _seq(R, R, R, B)}, hang_seq=4)
    assert skew is not None and (skew.kind, skew.culprits, skew.culprit_call.site) == (
        SkewKind.EXTRA,
        (0,),
        "/job/train.py:12",
    )
    assert "one rank called it and the other did not" in skew.said()


def test_calls_that_differ_only_where_the_ranks_wait_are_left_to_the_waits_own_analysis():
    """A mismatch at the very collective the ranks wait in, with nothing after it: nothing more to say than
    the wait's analysis says (both sides, at that number)."""
    from hangwatch.diagnose.alignment import align

    assert align({0: _seq(R, R, B), 1: _seq(R, R, R)}, hang_seq=3) is None


def test_the_same_call_with_other_sizes_is_a_size_mismatch():
    from hangwatch.diagnose.alignment import SkewKind, align

    a = ((1, "all_reduce", "[[4]]", "/job/train.py:30"), (2, "all_reduce", "[[4]]", "/job/train.py:30"))
    b = ((1, "all_reduce", "[[4]]", "/job/train.py:30"), (2, "all_reduce", "[[3]]", "/job/train.py:30"))
    skew = align({0: a, 1: a, 2: b}, hang_seq=2)
    assert skew is not None and (skew.kind, skew.seq, skew.culprits) == (SkewKind.SIZE, 2, (2,))
    assert "with sizes [[3]] where ranks 0-1 passed [[4]]" in skew.said()
    gather = ((1, "gather", "[[4]]", "/job/train.py:30"),)  # a gather's sizes may differ by rank
    assert align({0: gather, 1: ((1, "gather", "[[8]]", "/job/train.py:30"),)}, hang_seq=1) is None


def test_the_same_collective_called_from_a_line_per_rank_pairs_well():
    """``if rank == 0: broadcast(t, 0)`` / ``else: broadcast(t, 0)``: one collective from two lines, healthy; a
    later hang elsewhere is not blamed on it."""
    from hangwatch.diagnose.alignment import align

    src, dst = "broadcast@/job/train.py:20", "broadcast@/job/train.py:22"
    assert align({0: _seq(src, R, R, src, R), 1: _seq(dst, R, R, dst, R), 2: _seq(dst, R, R, dst)}, hang_seq=5) is None


# --- the exceptions the job printed ---------------------------------------------------------------------------
TORCHRUN_LOG = """\
rank 0 step 2
[rank1]: Traceback (most recent call last):
[rank1]:   File "/job/train.py", line 40, in <module>
[rank1]:     train()
[rank1]:   File "/job/train.py", line 31, in train
[rank1]:     raise ValueError("validation_step: shapes do not match")
[rank1]: ValueError: validation_step: shapes do not match
[rank0]: Traceback (most recent call last):
[rank0]:   File "/job/train.py", line 33, in train
[rank0]:     dist.all_reduce(x)
[rank0]:   File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 3252, in all_reduce
[rank0]:     work.wait()
[rank0]: RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:3998.
Traceback (most recent call last):
  File "/venv/bin/torchrun", line 6, in <module>
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
"""

SPAWN_LOG = """\
Process rank1:
Traceback (most recent call last):
  File "/usr/lib/python3.11/multiprocessing/process.py", line 314, in _bootstrap
    self.run()
  File "/job/train.py", line 25, in main
    raise KeyError("label")
KeyError: 'label'
"""


def test_the_rank_that_raised_first_is_read_from_the_log_not_the_peers_that_failed_after_it():
    from hangwatch.diagnose.raised import first_cause, raised_by, tracebacks

    got = tracebacks(TORCHRUN_LOG)
    assert [(r.rank, r.communication) for r in got] == [(1, False), (0, True), (None, True)]
    first = first_cause(TORCHRUN_LOG)
    assert first is not None and (first.rank, first.frame.line) == (1, 31)  # type: ignore[union-attr]
    assert first.text() == "raised ValueError: validation_step: shapes do not match at train.py:31 (train)"
    assert raised_by(TORCHRUN_LOG, 0) is None  # rank 0 only failed for rank 1's sake
    spawned = raised_by(SPAWN_LOG, 1)
    assert spawned is not None and spawned.text() == "raised KeyError: 'label' at train.py:25 (main)"
    # multiprocessing's default names count processes, not ranks
    assert tracebacks(SPAWN_LOG.replace("Process rank1:", "Process Process-1:"))[0].rank is None
    # torchrun --tee's "[default1]:" is the role and the LOCAL rank; torch's "[rank9]:" the global one
    teed = TORCHRUN_LOG.replace("[rank1]:", "[default1]:[rank9]:")
    assert [r.rank for r in tracebacks(teed)][:1] == [9]
    assert [r.rank for r in tracebacks(TORCHRUN_LOG.replace("[rank1]:", "[default1]:"))][:1] == [None]


def test_a_crash_is_placed_at_the_line_that_raised():
    from hangwatch.diagnose.crash import diagnose_crash

    root = diagnose_crash(1, TORCHRUN_LOG, pid=10)[0]
    assert root.where is not None and (root.where.rank, root.where.file, root.where.line) == (1, "/job/train.py", 31)
    assert "rank 1 raised ValueError: validation_step: shapes do not match at train.py:31 (train)" in root.summary
    alone = diagnose_crash(1, 'Traceback (most recent call last):\n  File "/job/a.py", line 3, in f\nOSError: disk\n')
    assert alone[0].summary == "The job exited with status 1 after it raised OSError: disk at a.py:3 (f)."


def test_a_line_of_stdout_inside_a_traceback_on_stderr_does_not_end_it():
    """stdout and stderr reach output.log through two pipes, read by two threads: on a loaded machine the job's
    last `step 5`, printed before the crash, landed inside its traceback, which was then dropped ("no known
    failure text": 2 of 6 runs beside two busy loops). A line that is no exception's goes by."""
    from hangwatch.diagnose.crash import diagnose_crash

    log = (
        "step 4\nTraceback (most recent call last):\nstep 5\n"
        '  File "/job/a.py", line 3, in f\n    load()\nloss: 0.25\nINFO:root:saved\nStep: 5\nOSError: disk\n'
    )
    root = diagnose_crash(1, log)[0]
    assert root.summary == "The job exited with status 1 after it raised OSError: disk at a.py:3 (f).", root.summary


def test_what_pairs_well_is_not_a_skew():
    """Healthy, from a review: one rank's recorder without frames among ranks that call from lines of their own;
    one call from another line inside a repeating pattern (it pairs either way: no shift is proven); two calls
    swapped at the end; an uneven all_to_all (its sizes differ by rank) recorded without frames."""
    from hangwatch.diagnose.alignment import align

    def a(seq, site, op="all_reduce", sizes="[[4]]"):
        return (seq, op, sizes, site)

    mixed = {
        0: (a(1, "/j/t.py:20"), a(2, "")),
        1: (a(1, "/j/t.py:20"), a(2, "/j/t.py:1"), a(3, "/j/t.py:20")),
        2: (a(1, "/j/t.py:20"), a(2, "/j/t.py:2")),
    }
    assert align(mixed, hang_seq=3) is None
    steady = tuple(a(i, "/j/t.py:5") for i in range(1, 6))
    once = (a(1, "/j/t.py:5"), a(2, "/j/t.py:12"), *(a(i, "/j/t.py:5") for i in range(3, 6)))
    assert (
        align({0: steady, 1: once}, hang_seq=6) is None and align({0: steady, 1: once, 2: steady}, hang_seq=6) is None
    )
    swapped = {
        0: (a(1, "/j/t.py:5"), a(2, "/j/t.py:50"), a(3, "/j/t.py:60")),
        1: (a(1, "/j/t.py:5"), a(2, "/j/t.py:60"), a(3, "/j/t.py:50")),
    }
    assert align(swapped, hang_seq=4) is None
    moe = {r: (a(1, "", "all_to_all", "[[4]]"), a(2, "", "all_to_all", f"[[{2 + 4 * r}]]")) for r in (0, 1)}
    assert align(moe, hang_seq=3) is None
    elsewhere = {0: (a(1, "/home/a/train.py:9"), a(2, "/home/a/train.py:9")), 1: (a(1, "/scratch/train.py:9"),)}
    assert align(elsewhere, hang_seq=3) is None  # the same script at another path on another node


def test_a_call_skipped_right_before_the_hang_is_named_at_the_line_it_skipped():
    """Four ranks; the last skips the barrier inside an `if`, then all call a second barrier: its second barrier
    completes the others' first, and the hang comes at the very next call (#16: the others' second barrier, its
    next step's all_reduce). One pair after the shift is all the recorders hold; three ranks against one decide.
    Its twin, calls of one op swapped between lines (they pair either way), names nothing."""
    from hangwatch.diagnose.alignment import SkewKind, align

    a, b = "barrier@/job/train.py:20", "barrier@/job/train.py:22"
    others = _seq(R, a, b, start=14)
    skew = align({0: others, 1: others, 2: others, 3: _seq(R, b, R, start=14)}, hang_seq=16)
    assert skew is not None and (skew.kind, skew.seq, skew.culprits, skew.culprit_call.site) == (
        SkewKind.SKIPPED,
        15,
        (3,),
        "/job/train.py:20",
    ), skew
    assert skew.said().startswith("Rank 3 never called barrier at train.py:20 (collective #15; ranks 0-2 did)")
    x, y = "all_reduce@/job/t.py:50", "all_reduce@/job/t.py:60"
    swapped = _seq(R, x, y, start=14)
    assert align({0: swapped, 1: swapped, 2: _seq(R, y, x, start=14)}, hang_seq=17) is None
