"""The wait-for graph (issue [1/5]): who waits on whom, and whether the end of the chain can ever move.

Both ways on real processes (a parent in os.waitpid for a forked child: the child packs a shard at full CPU,
its locals walking the data, and is waited for; the same child spinning on a state nobody changes is a hang),
and the chain follower on tables: every ending decides as documented, and an inverted one fails here.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import SCENARIOS, Run, inspect_json, marker, py, root_cause, two_free_ports

from hangwatch.diagnose.graph import ENDINGS, Edge, Node, _follow
from hangwatch.incident import ProofKind, Verdict

QUICK = ["--capture-window", "1", "--kill-grace", "2"]


def _chain_of(incident: dict, pid: int) -> dict:
    chains = incident["graph"]["chains"]
    return next(c for c in chains if c["waiter"] == f"pid:{pid}")


@pytest.mark.e2e
def test_a_parent_waiting_for_a_child_that_packs_at_full_cpu_is_left_to_finish(run: Run):
    """The false kill of the issue: `--min-stall 3 --on-hang kill` ended this job as child.wait ("the child is
    not moving") while its child packed at 99 % CPU, its locals changing. The chain ends in proven work."""
    r = run("--min-stall", "3", "--on-hang", "kill", *QUICK, *py("child_packing.py"), env={"HW_PACK_S": "12"})
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    assert b"packed 0" in r.stdout
    incidents = [run.incident(n) for n in range(1, run.summary()["incidents"] + 1)]
    assert all(i["action"] == "none" and i["verdict"] != "hung" for i in incidents), [
        (i["verdict"], i["findings"][0]["cause"]) for i in incidents
    ]


@pytest.mark.e2e
def test_inspect_follows_the_wait_to_a_working_child(start_job):
    job = start_job("child_packing.py", env={"HW_PACK_S": "60"})
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert incident["verdict"] == "slow", root
    assert root["cause"] == "child.wait" and root["proof"]["kind"] == "work", root
    line = marker("child_packing.py", "HANG-HERE:child")[1]
    assert root["where"]["function"].endswith("pack_shard") and line <= root["where"]["line"] <= line + 2, root["where"]
    chain = _chain_of(incident, job.pid)
    assert chain["ending"] == "working" and chain["verdict"] == "slow", chain
    assert "its loop advances" in chain["words"][1], chain["words"]
    assert chain["hops"][0]["resource"] == "child"


@pytest.mark.e2e
def test_inspect_follows_the_wait_to_a_child_that_spins(start_job):
    job = start_job("child_packing.py", env={"HW_PACK_SPIN": "1"})
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert incident["verdict"] == "hung", root
    assert root["cause"] == "child.wait", root
    line = marker("child_packing.py", "HANG-HERE:spin")[1]
    assert root["where"]["function"].endswith("wait_for_slot") and line <= root["where"]["line"] <= line + 1, root
    chain = _chain_of(incident, job.pid)
    assert chain["ending"] == "spinning", chain
    assert "`ring` stayed" in chain["words"][1], chain["words"]


# --- the chain follower, on tables ---------------------------------------------------------------------------
def _graph(states: dict[str, str], edges: list[tuple[str, str, str]]) -> tuple[dict[str, Node], dict[str, list[Edge]]]:
    nodes = {
        n: Node(n, n, s, f"measured {s}", proves_work=s == "working", single_minded=s == "blocked")
        for n, s in states.items()
    }
    out: dict[str, list[Edge]] = {}
    for a, b, res in edges:
        out.setdefault(a, []).append(Edge(a, b, res, f"{a} waits for {b}"))
    return nodes, out


@pytest.mark.parametrize(
    ("end_state", "verdict", "proof"),
    [
        ("gone", Verdict.HUNG, ProofKind.HANG),
        ("nobody", Verdict.HUNG, ProofKind.HANG),
        ("person", Verdict.HUNG, ProofKind.HANG),
        ("stopped", Verdict.HUNG, ProofKind.HANG),
        ("blocked", Verdict.HUNG, None),
        ("spinning", Verdict.HUNG, None),
        ("idle", Verdict.HUNG, None),
        ("working", Verdict.SLOW, ProofKind.WORK),
        ("asleep", Verdict.SLOW, None),
        ("wakes", Verdict.SLOW, None),
        ("unknown", None, None),
    ],
)
def test_each_ending_decides(end_state, verdict, proof):
    nodes, out = _graph({"a": "blocked", "b": "blocked", "c": end_state}, [("a", "b", "child"), ("b", "c", "lock")])
    chain = _follow("a", nodes, out)
    assert chain is not None
    assert [h.holder for h in chain.hops] == ["b", "c"]
    assert chain.ending == end_state and chain.verdict == verdict
    assert (chain.proof.kind if chain.proof else None) == proof
    assert chain.lines()[0] == "a waits for b" and chain.lines()[-1].startswith("=> ")


def test_a_cycle_is_proof():
    nodes, out = _graph({"a": "blocked", "b": "blocked"}, [("a", "b", "semaphore"), ("b", "a", "semaphore")])
    chain = _follow("a", nodes, out)
    assert chain is not None and chain.ending == "cycle" and chain.verdict == Verdict.HUNG
    assert chain.proof is not None and chain.proof.kind == ProofKind.HANG


def test_a_cycle_through_a_process_with_another_thread_that_may_run_is_no_proof():
    """Nodes are processes: a cycle proves nothing when one of them has another thread that could still read
    the pipe or release the lock."""
    nodes, out = _graph({"a": "blocked", "b": "blocked"}, [("a", "b", "child"), ("b", "a", "pipe_full")])
    nodes["b"] = Node("b", "b", "blocked", "measured", single_minded=False)
    chain = _follow("a", nodes, out)
    assert chain is not None and chain.ending == "blocked" and chain.proof is None


def test_of_several_holders_a_working_one_decides_but_a_batch_waits_for_the_stuck_worker():
    nodes, out = _graph(
        {"m": "blocked", "w1": "blocked", "w2": "working"}, [("m", "w1", "child"), ("m", "w2", "child")]
    )
    chain = _follow("m", nodes, out)
    assert chain is not None and chain.end.id == "w2" and chain.ending == "working"
    nodes, out = _graph(
        {"m": "blocked", "w1": "working", "w2": "blocked"},
        [("m", "w1", "dataloader batch"), ("m", "w2", "dataloader batch")],
    )
    chain = _follow("m", nodes, out)
    assert chain is not None and chain.end.id == "w2" and chain.ending == "blocked"


def test_a_waiter_with_no_edge_has_no_chain():
    nodes, out = _graph({"a": "working"}, [])
    assert _follow("a", nodes, out) is None


def test_the_endings_table_is_what_the_docs_say():
    proven = {k for k, (_, p) in ENDINGS.items() if p}
    assert proven == {"cycle", "gone", "nobody", "person", "stopped", "long_sleep"}
    assert ENDINGS["working"][0] == Verdict.SLOW and ENDINGS["unknown"][0] is None


# --- pipes: the write end's holders, in the job or outside it ------------------------------------------------
def _end_writer(tmp: Path) -> int | None:
    """End the pipe's writer (outside the job: the test started it, so the test ends it, by pid)."""
    path = tmp / "writer.pid"
    deadline = time.monotonic() + 10
    while not (path.exists() and path.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not path.exists():
        return None
    pid = int(path.read_text())
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return None
    return pid


def _writer_alive(tmp: Path) -> bool:
    pid = int((tmp / "writer.pid").read_text())
    return psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("mode", "verdict", "proof"), [("blocked", "hung", "hang"), ("work", "waiting", "work"), ("sleep", "slow", None)]
)
def test_a_pipe_read_follows_its_writer_outside_the_job(start_job, tmp_path, mode, verdict, proof):
    try:
        job = start_job("pipe_outside_writer.py", env={"HW_WRITER": mode, "HW_WRITER_S": "60"})
        incident = inspect_json(job.pid)
    finally:
        writer = _end_writer(tmp_path)
    assert writer is not None
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"]) == (verdict, "process.waits_on"), root
    assert (root["where"]["file"], root["where"]["line"]) == marker("pipe_outside_writer.py"), root["where"]
    assert f"held by pid {writer}" in root["summary"] and "outside the job" in root["summary"], root["summary"]
    assert (root["proof"] or {}).get("kind") == proof, root["proof"]
    assert writer not in {p["pid"] for p in incident["processes"]}, "the writer is not part of the job"
    chain = _chain_of(incident, job.pid)
    assert chain["hops"][0]["resource"] == "pipe" and chain["end"] == f"pid:{writer}", chain
    holder = next(n for n in incident["graph"]["nodes"] if n["id"] == f"pid:{writer}")
    assert holder["in_job"] is False


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("sock", "mode", "verdict", "proof"),
    [
        ("unix", "blocked", "hung", "hang"),
        ("tcp", "blocked", "hung", "hang"),
        ("unix", "work", "waiting", "work"),
        ("tcp", "sleep", "slow", None),
    ],
)
def test_a_socket_read_follows_its_peer_outside_the_job(start_job, tmp_path, sock, mode, verdict, proof):
    """A read of a unix socket or a loopback connection waits for whoever holds the other end (found by inode
    through the kernel's socket tables): parked, it is proven hung; working, the job waits; asleep, it is slow."""
    try:
        job = start_job("socket_outside_peer.py", env={"HW_SOCK": sock, "HW_PEER": mode, "HW_PEER_S": "60"})
        incident = inspect_json(job.pid)
    finally:
        peer = _end_writer(tmp_path)
    assert peer is not None
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"]) == (verdict, "process.waits_on"), root
    assert (root["where"]["file"], root["where"]["line"]) == marker("socket_outside_peer.py"), root["where"]
    assert f"held by pid {peer}" in root["summary"] and "outside the job" in root["summary"], root["summary"]
    assert (root["proof"] or {}).get("kind") == proof, root["proof"]
    chain = _chain_of(incident, job.pid)
    assert chain["hops"][0]["resource"] == "socket" and chain["end"] == f"pid:{peer}", chain


@pytest.mark.e2e
def test_a_debugger_prompt_on_a_pipe_whose_writer_works_is_still_nobody_typing(run: Run):
    """dist.breakpoint() opens /dev/stdin again: that read is the job's standard input (the input rule's), not a
    pipe whose busy writer (here a launcher script that computes) would make the wait look like waiting for
    work. The prompt's own proof leads the peer's wait (the recorder's `never entered barrier`), which only
    inherits it through the chain. Seen in the zoo when its busy runner held the job's stdin."""
    writer = subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: sum(range(10**6))"], stdout=subprocess.PIPE
    )
    try:
        assert writer.stdout is not None
        p = run.start(
            "--min-stall",
            "5",
            "--on-hang",
            "kill",
            *py("dist_breakpoint.py"),
            stdin=writer.stdout.fileno(),
            env={"HW_PORT": str(two_free_ports()), "HW_TMP": str(run.tmp)},
        )
        _, err = p.communicate(timeout=90)
    finally:
        writer.kill()
        writer.wait(timeout=10)
    assert p.returncode == 125, err.decode()[-2000:]
    incident = run.incident()
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"], root["proof"]["kind"]) == ("hung", "process.waits_for_input", "hang")
    assert (root["where"]["file"], root["where"]["line"]) == marker("dist_breakpoint.py"), root["where"]
    peer = next(f for f in incident["findings"] if f["cause"] == "distributed.peer_stuck")
    assert peer["where"]["line"] == root["where"]["line"], peer
    assert _chain_of(incident, root["where"]["pid"])["ending"] == "person"  # not the writer of the pipe


@pytest.mark.e2e
def test_a_pipe_whose_only_writer_is_the_reader_is_proven_hung(start_job):
    job = start_job("pipe_self_held.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"]) == ("hung", "process.waits_on"), root
    assert (root["where"]["file"], root["where"]["line"]) == marker("pipe_self_held.py"), root["where"]
    assert root["proof"]["kind"] == "hang" and "only holder of the write end" in root["proof"]["fact"]


@pytest.mark.e2e
def test_with_the_defaults_pipe_hangs_are_declared_at_the_first_look_and_their_twins_finish(tmp_path):
    """No flags but --on-hang kill: a read whose writer outside the job is parked, and a read whose only writer is
    the reader, are declared at the first look (not after --min-stall's 120 s); the writer outside the job is
    never touched. Their twins (the writer works, then writes; the reader closes its copy) finish untouched."""
    cases = [
        ("pipe_outside_writer.py", {"HW_WRITER": "blocked"}),
        ("pipe_self_held.py", {}),
        ("pipe_outside_writer.py", {"HW_WRITER": "work", "HW_WRITER_S": "18"}),
        ("pipe_self_held.py", {"HW_CLOSE": "1"}),
    ]
    runs = []
    try:
        for i, (script, env) in enumerate(cases):
            d = tmp_path / f"r{i}"
            d.mkdir()
            r = Run(d)
            r.start("--on-hang", "kill", *py(script), env={**env, "HW_TMP": str(d)})
            runs.append((r, time.monotonic()))
        outcomes = []
        for r, t0 in runs:
            assert r.proc is not None
            _, err = r.proc.communicate(timeout=max(1.0, 90 - (time.monotonic() - t0)))
            outcomes.append((r.proc.returncode, err))
        assert _writer_alive(tmp_path / "r0"), "hangwatch never touches a process outside the job"
    finally:
        for i in (0, 2):
            _end_writer(tmp_path / f"r{i}")
        left = [p for r, _ in runs for p in r.cleanup()]
    assert not left, f"left behind: {left}"
    for (script, env), (r, _), (rc, err) in zip(cases[:2], runs[:2], outcomes[:2], strict=True):
        assert rc == 125, (script, env, err.decode()[-2000:])
        incident = r.incident()
        root = root_cause(incident)
        assert (incident["verdict"], root["cause"], root["proof"]["kind"]) == ("hung", "process.waits_on", "hang"), root
        latency = incident["detected_at"] - r.events()[1]["at"]
        assert latency <= 25.0, (script, latency)
    for (script, env), (r, _), (rc, err) in zip(cases[2:], runs[2:], outcomes[2:], strict=True):
        assert rc == 0, (script, env, err.decode()[-2000:])
        s = r.summary()
        assert s["incidents"] == 0 and s["exit_reason"] == "finished", (script, env, s)


# --- a loop with no way out ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "endless"),
    [
        ("while True:\n    time.sleep(1)", True),
        ("while 1:\n    sleep(0.2)\n    continue", True),
        ("while True:\n    time.sleep(1)\n    if done:\n        break", False),
        ("while True:\n    poll()\n    time.sleep(1)", False),  # a call may raise or exit
        ("while not done:\n    time.sleep(1)", False),
        ("while True:\n    try:\n        time.sleep(1)\n    except KeyboardInterrupt:\n        pass", False),
        ("for _ in range(10):\n    time.sleep(1)", False),
        (None, False),
    ],
)
def test_never_exits(source, endless):
    from hangwatch.diagnose.loops import never_exits

    assert (never_exits(source) is not None) is endless


@pytest.mark.e2e
def test_a_child_in_a_keepalive_loop_with_no_way_out_is_proven_hung(start_job):
    """`while True: time.sleep(...)` in a child the parent joins with no timeout: `slow` before (it wakes);
    the loop's source proves it never ends."""
    job = start_job("child_keepalive.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"], (root["proof"] or {}).get("kind")) == ("hung", "child.wait", "hang"), (
        root
    )
    assert (root["where"]["file"], root["where"]["line"]) == marker("child_keepalive.py", "HANG-HERE:child")
    assert "`while True:` has no break" in root["proof"]["fact"]
    assert _chain_of(incident, job.pid)["ending"] == "looping"


@pytest.mark.e2e
def test_a_child_whose_keepalive_loop_ends_is_alive(start_job):
    job = start_job("child_keepalive.py", env={"HW_HELPER_EXIT_S": "60"})
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"]) == ("slow", "child.wait"), root
    assert root["proof"] is None


# --- a sleep's timer, read from the kernel ------------------------------------------------------------------
@pytest.mark.e2e
def test_a_child_asleep_on_a_timer_of_years_is_proven_hung(start_job):
    """No number on the sleeping line: the timer's end comes from the sleep's own request, read from the child."""
    job = start_job("child_sleeps.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"], (root["proof"] or {}).get("kind")) == ("hung", "child.wait", "hang"), (
        root
    )
    assert "whose end the kernel shows" in root["proof"]["fact"] and "31.7 years" in root["proof"]["fact"], root
    assert _chain_of(incident, job.pid)["ending"] == "long_sleep"


@pytest.mark.e2e
def test_a_child_asleep_on_a_short_timer_is_alive(start_job):
    job = start_job("child_sleeps.py", env={"HW_SLEEP_S": "60"})
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"]) == ("slow", "child.wait"), root
    assert _chain_of(incident, job.pid)["ending"] == "asleep"


def test_a_chain_through_a_wait_that_times_out_proves_nothing():
    nodes, out = _graph({"a": "blocked", "b": "gone"}, [])
    out = {"a": [Edge("a", "b", "file lock", "a waits for b", timeout=True)]}
    chain = _follow("a", nodes, out)
    assert chain is not None and chain.ending == "gone" and chain.proof is None


def test_the_page_draws_the_chain_behind_the_root_cause():
    from hangwatch.causes import Cause
    from hangwatch.incident import Action, Finding, Incident, Where
    from hangwatch.report.html import chain_html

    graph = {
        "nodes": [
            {"id": "pid:10", "label": "main (pid 10)", "state": "blocked", "fact": "read", "in_job": True},
            {
                "id": "pid:14",
                "label": "pid 14 (`tar`, outside the job)",
                "state": "blocked",
                "fact": "parked",
                "in_job": False,
            },
        ],
        "edges": [],
        "chains": [
            {
                "waiter": "pid:10",
                "end": "pid:14",
                "ending": "blocked",
                "verdict": "hung",
                "proof": None,
                "hops": [
                    {
                        "waiter": "pid:10",
                        "holder": "pid:14",
                        "resource": "pipe",
                        "timeout": False,
                        "words": "main reads a pipe",
                    }
                ],
                "words": ["main reads a pipe", "-> pid 14 is blocked: parked", "=> the holder is blocked"],
            }
        ],
    }
    where = Where(pid=10, rank=None, tid=10, file="/x/prep.py", line=12, function="read_manifest")
    inc = Incident(
        verdict=Verdict.HUNG,
        detected_at=0.0,
        last_progress=None,
        attempt=1,
        action=Action.NONE,
        processes=(),
        findings=(Finding(Cause.PROCESS_WAITS_ON, 0.9, "s", where),),
        graph=graph,
    )
    page = chain_html(inc)
    assert page.count('class="node') == 2 and 'class="node end out"' in page, page
    assert "pipe (no timeout)" in page and "the holder is blocked" in page
    assert inc.root_chain() == ("main reads a pipe", "-> pid 14 is blocked: parked", "=> the holder is blocked")
    back = Incident.from_dict(inc.to_dict())
    assert back.graph == graph
    assert (
        chain_html(
            Incident(
                verdict=Verdict.HUNG,
                detected_at=0.0,
                last_progress=None,
                attempt=1,
                action=Action.NONE,
                processes=(),
                findings=(),
            )
        )
        == ""
    )


def test_filelock_4_3s_resolved_wait_tuple_says_the_acquire_has_no_timeout():
    """filelock 4.3 passes `timeout: None` to acquire and resolves it into a `wait` tuple (recorded here with
    py-spy --locals): the wait with no timeout is read from there (a CI run with 4.3.1 lost "with no timeout")."""
    from hangwatch.capture.waits import FILELOCK_WAIT

    m = FILELOCK_WAIT.match("(True, None, -1, 0.05, 1977.137927692)")
    assert m is not None and float(m.group(1)) < 0
    m = FILELOCK_WAIT.match("(True, None, 600.0, 0.05, 1977.1)")
    assert m is not None and float(m.group(1)) == 600.0
    assert FILELOCK_WAIT.match("<FileLockContext at 0x7f>") is None


def test_bytes_in_one_call_are_no_proof_of_work():
    """A write blocked on a full pipe returns its 64 KiB once when a stack read interrupts it: one call moving
    bytes is no work; the same bytes in many calls are."""
    import dataclasses
    import json as _json

    from hangwatch.diagnose.views import ProcessView
    from hangwatch.evidence_io import evidence_from_dict

    ev = evidence_from_dict(
        _json.loads((Path(__file__).parent / "fixtures" / "evidence" / "lost_work_inferred.json").read_text())
    )
    child = next(p for p in ev.processes if p.info.role.value == "child")

    def moved(calls: int) -> ProcessView:
        samples = tuple(
            dataclasses.replace(
                s, rchar=(s.rchar or 0) + (65536 if i else 0), syscalls=(s.syscalls or 0) + (calls if i else 0)
            )
            for i, s in enumerate(child.samples)
        )
        return ProcessView(dataclasses.replace(child, samples=samples), ev.clock_ticks)

    assert moved(1).work is None
    assert moved(40).work is not None and "moved 64 KiB" in moved(40).work


def _keepalive_samples(awake_at: set[int], n: int = 5) -> dict[int, list]:
    """Samples of the keep-alive child as a capture records them: idle at its sleep, or (at ``awake_at``) caught
    awake between two sleeps, on the loop's header."""
    from hangwatch.evidence import Frame, ProcessSample, ThreadSample

    path = str(SCENARIOS / "child_keepalive.py")
    _, sleep_line = marker("child_keepalive.py", "HANG-HERE:child")
    out = []
    for i in range(n):
        awake = i in awake_at
        frame = Frame("keep_alive", path, sleep_line - 1 if awake else sleep_line)
        thread = ThreadSample(7, "MainThread", "R" if awake else "S", None, 0, awake, awake, (frame,))
        out.append(ProcessSample(float(i), "S", 0.0, None, None, None, None, None, 1, (thread,), None))
    return {7: out}


@pytest.mark.parametrize("awake_at", [set(), {2}, {0, 3}])
def test_a_keepalive_loop_is_read_even_when_a_sample_caught_it_awake(awake_at):
    """Deterministic twin of the e2e keep-alive test: on a busy machine a sample can catch the thread between
    two sleeps; the loop is still read (and still proven to have no way out)."""
    from hangwatch.capture.locals import sleeping_loops
    from hangwatch.diagnose.loops import never_exits

    reads = sleeping_loops(_keepalive_samples(awake_at))[7]
    assert len(reads) == 1 and reads[0].loop.strip().startswith("while True"), reads
    assert never_exits(reads[0].body) is not None


def test_a_thread_idle_at_two_places_has_no_one_loop():
    from hangwatch.capture.locals import sleeping_loops

    samples = _keepalive_samples(set())
    moved = [
        s
        if i % 2
        else dataclasses.replace(
            s,
            threads=(dataclasses.replace(s.threads[0], frames=(dataclasses.replace(s.threads[0].frames[0], line=1),)),),
        )
        for i, s in enumerate(samples[7])
    ]
    assert sleeping_loops({7: moved}) == {}
