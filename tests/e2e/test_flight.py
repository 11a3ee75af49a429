"""Every rank's collectives from torch's flight recorder (issue [2/5]): real torchrun jobs on gloo, each rank
serving torch's worker server on a unix socket, read at the stall; the recorder's analysis on recorded dumps,
NCCL's format included.

Here the tests that start real processes; those that start none are in tests/unit/test_flight.py.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from conftest import marker, only_slow_incidents, py, root_cause, torchrun

pytest.importorskip("torch")

QUICK = ["--min-stall", "3", "--capture-window", "1", "--kill-grace", "2", "--on-hang", "kill"]


def _torchrun(n: int, script: str, *args: str) -> list[str]:
    return ["--", *torchrun(n, script, *args)]


def _where(root: dict, script: str, tag: str) -> None:
    assert (root["where"]["file"], root["where"]["line"]) == marker(script, tag), root["where"]


@pytest.mark.e2e
def test_a_barrier_only_rank_0_calls_is_named_from_the_recorder(run):
    """3 ranks: rank 0 alone calls dist.barrier() in `if rank == 0:`; ranks 1 and 2 are in the next step's
    all_reduce. The recorder says both sides at the same sequence number, with each side's line."""
    r = run(*QUICK, *_torchrun(3, "dist_fr_barrier.py"))
    assert r.returncode == 125, r.stderr.decode()[-3000:]  # collectives only some ranks call: a bug in the code
    incident = run.incident()
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck" and root["confidence"] >= 0.95, root
    _where(root, "dist_fr_barrier.py", "HANG-HERE:odd")
    assert root["where"]["rank"] == 0
    s = root["summary"]
    _, odd = marker("dist_fr_barrier.py", "HANG-HERE:odd")
    _, others = marker("dist_fr_barrier.py", "HANG-HERE:others")
    assert "disagree at collective #7" in s and f"rank 0: barrier at dist_fr_barrier.py:{odd}" in s, s
    assert f"ranks 1-2: all_reduce [[1024]] at dist_fr_barrier.py:{others}" in s, s
    assert root["proof"]["kind"] == "hang"
    table = {c["ranks"]: c for c in incident["collectives"]}
    assert table["rank 0"]["last_entered"] == "barrier #7 []" and table["rank 0"]["last_completed"] == "#6"
    assert table["ranks 1-2"]["state"].startswith("waits in all_reduce #7 (4.0 KiB")
    # The raw dumps, for torch's own analyser, and the table in report.md.
    dumps = sorted((run.dir / "incidents" / "001" / "flight").glob("rank-*.json"))
    assert [p.name for p in dumps] == ["rank-0.json", "rank-1.json", "rank-2.json"]
    assert all(json.loads(p.read_text())["entries"] for p in dumps)
    assert "## Collectives (torch's flight recorder)" in (run.dir / "incidents" / "001" / "report.md").read_text()
    # The job's own sockets: in the heartbeat directory (0700), each 0600; nothing listens on TCP.
    hb = run.dir / "heartbeat"
    assert stat.S_IMODE(hb.stat().st_mode) == 0o700
    # Each rank says where it served (heartbeat/flight-<pid>.json): all three in the heartbeat directory. A socket is
    # gone only where its rank closed it on its way out ("closed": a rank whose peer died first raises and runs its
    # exit handlers before the SIGTERM lands; seen under load, 1 suite run of 8); the rest are there, each 0600.
    served = [json.loads(p.read_text()) for p in hb.glob("flight-*.json")]
    assert len(served) == 3 and all(Path(e["socket"]).parent == hb for e in served), served
    socks = list(hb.glob("flight-*.sock"))
    assert {str(p) for p in socks} | {e["socket"] for e in served if e.get("kind") == "closed"} == {
        e["socket"] for e in served
    }, (socks, served)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in socks)
    assert not any(c.isdigit() for e in served for c in Path(e["socket"]).name), "torch prints the name: no number"


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("mode", "n"),
    [("skip", 2), ("skip", 4), ("extra", 3)],
)
def test_a_collective_one_rank_skipped_or_added_is_named_where_it_went_wrong_not_where_it_hung(run, mode, n):
    """The last rank skips the warm-up all_reduce of step 0, or calls one more; gloo pairs all_reduces by number
    whatever their line, so every later pair is one off until step 3's barrier meets an all_reduce and the job
    hangs there. Paired by call site, the finding names the line of step 0 where the ranks went different ways."""
    r = run(*QUICK, *_torchrun(n, "dist_skew.py", mode))
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    root = root_cause(run.hang())
    s = root["summary"]
    assert root["cause"] == "distributed.peer_stuck" and root["proof"]["kind"] == "hang", root
    _, barrier = marker("dist_skew.py", "HANG-HERE:barrier")
    if mode == "extra":  # the rank that added it, at the line it added
        _where(root, "dist_skew.py", "HANG-HERE:extra")
        _, line = marker("dist_skew.py", "HANG-HERE:extra")
        others = "ranks 0-1" if n == 3 else "rank 0"
        assert root["where"]["rank"] == n - 1, root["where"]
        assert s.startswith(
            f"Rank {n - 1} called all_reduce at dist_skew.py:{line} as collective #3, which {others} did not"
        ), s
    elif n > 2:  # a majority: the rank that skipped it, at the line it skipped
        _where(root, "dist_skew.py", "HANG-HERE:warmup")
        _, line = marker("dist_skew.py", "HANG-HERE:warmup")
        assert root["where"]["rank"] == n - 1, root["where"]
        assert s.startswith(
            f"Rank {n - 1} never called all_reduce at dist_skew.py:{line} (collective #1; ranks 0-{n - 2} did)"
        ), s
    else:  # two ranks: one called it and the other did not; the line is the same either way
        _where(root, "dist_skew.py", "HANG-HERE:warmup")
        assert root["where"]["rank"] == 0 and "one rank called it and the other did not" in s, s
    assert "since then every collective is paired one off" in s and f"barrier (dist_skew.py:{barrier})" in s, s
    assert root["evidence"][0].startswith("the ranks' collectives paired by call site (the recorders' frames)")


@pytest.mark.e2e
def test_a_rank_with_one_batch_fewer_is_named_at_the_barrier_it_reached_early(run):
    """3 ranks; rank 2 has one batch fewer: it reaches the final barrier while ranks 0-1 are in their last
    step's all_reduce (gloo never pairs the two). The majority names rank 2, at its barrier's line."""
    r = run(*QUICK, *_torchrun(3, "dist_skew.py", "uneven"))
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    root = root_cause(run.hang())
    _where(root, "dist_skew.py", "HANG-HERE:final")
    assert root["where"]["rank"] == 2 and root["proof"]["kind"] == "hang", root
    _, reduce = marker("dist_skew.py", "HANG-HERE:reduce")
    assert (
        "Rank 2 took another path" in root["summary"]
        and f"all_reduce [[4]] at dist_skew.py:{reduce}" in (root["summary"])
    ), root["summary"]


@pytest.mark.e2e
def test_a_rank_that_forks_a_pool_right_after_init_keeps_its_flight_recorder_server(run):
    """A rank forks a Pool right after init_process_group (datasets.map(num_proc=...) on rank 0): each forked worker
    dropped its inherited copy of the rank's worker server (the hook's after-fork reset), whose destructor shuts the
    server down, closing the listening socket the rank shares with it: the rank's server thread failed ("failed to
    listen"), aborted the rank, and hangwatch turned a healthy job into a crash (exit 1). The child now keeps its copy
    for good; the job ends as it does without hangwatch."""
    r = run(*QUICK, *py("dist_rank_forks_pool.py"))
    out = r.stdout + r.stderr
    assert r.returncode == 0 and b"done" in out, out.decode()[-3000:]
    assert b"failed to listen" not in out and b"destructor called without shutdown" not in out, out.decode()[-3000:]


@pytest.mark.e2e
@pytest.mark.parametrize(("mode", "n"), [("same", 3), ("solo", 2)])
def test_ranks_that_call_the_same_collectives_or_a_group_of_their_own_finish_untouched(run, mode, n):
    """The healthy twins: every rank takes the same branch; rank 0 alone calls collectives on a group only it is
    in (its sequence there is its own, never paired with the others')."""
    r = run(*QUICK, *_torchrun(n, "dist_skew.py", mode))
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    out = r.stdout + r.stderr
    assert all(f"rank {k} done".encode() in out for k in range(n))
    assert not list((run.dir / "incidents").glob("*/incident.json"))


@pytest.mark.e2e
@pytest.mark.timeout(200)  # the run is bounded at 150 s
def test_ddp_ranks_inside_backward_are_told_apart_by_the_recorder(run):
    """4 ranks with DDP: rank 2 is stuck loading its batch; ranks 0, 1, 3 are inside loss.backward(), where no
    Python frame shows a collective. The recorder names the reducer's all_reduce they wait in, its sequence
    number and size, and the rank that never entered it."""
    r = run(*QUICK, *_torchrun(4, "dist_ddp_data.py"), timeout=150)
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    incident = run.incident()
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck" and root["where"]["rank"] == 2, root
    _where(root, "dist_ddp_data.py", "HANG-HERE:culprit")
    _, line = marker("dist_ddp_data.py", "HANG-HERE:victims")
    s = root["summary"]
    assert s.startswith("Rank 2 is stuck at load_batch (dist_ddp_data.py:") and "never entered all_reduce #" in s, s
    seq = int(s.split("all_reduce #")[1].split()[0])
    assert (
        f"(it last completed #{seq - 1}), while ranks 0-1,3 wait in all_reduce #{seq} (17 KiB, "
        f"dist_ddp_data.py:{line}) since " in s
    ), s
    # The stacks alone could not tell: no victim shows a collective frame.
    victims = [p for p in incident["processes"] if p["rank"] in (0, 1, 3) and p["role"] == "rank"]
    assert len(victims) == 3
    assert not any("distributed_c10d.py" in f["file"] for p in victims for t in p["threads"] for f in t["frames"])


@pytest.mark.e2e
def test_a_rank_that_raised_and_cannot_exit_is_named_at_the_thread_it_waits_for(run):
    """2 ranks: rank 1 raised and is exiting, joining a non-daemon thread that waits forever; rank 0 waits in
    all_reduce. The culprit is rank 1 at its thread's line, not threading.py where its main thread joins."""
    r = run(*QUICK, *_torchrun(2, "dist_raise_at_exit.py"))
    assert r.returncode != 0, r.stderr.decode()[-3000:]
    assert b"validation_step: shapes do not match" in r.stdout + r.stderr  # the real error, kept in the log
    root = root_cause(run.incident())
    assert root["cause"] == "distributed.peer_stuck" and root["where"]["rank"] == 1, root
    _where(root, "dist_raise_at_exit.py", "HANG-HERE")
    s = root["summary"]
    _, raised = marker("dist_raise_at_exit.py", "HANG-HERE:raised")
    assert s.startswith("Rank 1 is ") and (
        "exiting after it raised ValueError: validation_step: shapes do not match at "
        f"dist_raise_at_exit.py:{raised} (train), and waits for its non-daemon thread 'metrics-uploader'" in s
    ), s
    assert "while rank 0 waits in all_reduce #" in s, s
    fact = root["proof"]["fact"]  # the chain's end is rank 1's own: its nobody, not the first process's
    assert "rank 0" not in fact and "nobody is nobody" not in fact and "no living thread can set it" in fact, fact


@pytest.mark.e2e
def test_a_rank_that_raised_and_exited_is_the_crashs_cause_at_the_line_that_raised(run):
    """2 ranks: rank 1 raises and exits; rank 0's all_reduce then fails ("Connection closed by peer"), and
    torchrun ends the job. The crash's finding is at rank 1's line that raised, not at rank 0's collective."""
    r = run(*QUICK, *_torchrun(2, "dist_raise_at_exit.py", "exit"))
    assert r.returncode not in (0, 124, 125), r.stderr.decode()[-3000:]
    root = root_cause(run.incident())
    assert run.incident()["verdict"] == "crashed", root
    _where(root, "dist_raise_at_exit.py", "HANG-HERE:raised")
    assert root["where"]["rank"] == 1, root["where"]
    assert any(
        e.startswith("the job's log: rank 1 raised ValueError: validation_step: shapes do not match at")
        for e in root["evidence"]
    ), root


@pytest.mark.e2e
def test_a_rank_asleep_past_the_groups_timeout_is_a_proven_hang_and_a_short_nap_is_left_alone(run):
    """Rank 1 sleeps in one time.sleep() while rank 0 waits in all_reduce. A sleeping rank does not work: a
    timer that ends after the collective's own timeout (the recorder's, 30 min here) can never be waited out:
    proven at the first look. The twin naps 6 s with --min-stall 3: a timer wakes it, the job finishes."""
    r = run(*QUICK, *_torchrun(2, "dist_nap.py", "36000"))
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    root = root_cause(run.hang())
    _where(root, "dist_nap.py", "HANG-HERE:nap")
    assert root["where"]["rank"] == 1 and root["proof"]["kind"] == "hang", root
    assert "asleep at cool_down (dist_nap.py:" in root["summary"], root["summary"]
    assert (
        "on a timer that ends in 10.0 h, after the collective the others wait in gives up (30 min"
        in (root["proof"]["fact"])
    )
    twin = run(*QUICK, *_torchrun(2, "dist_nap.py", "6"))
    assert twin.returncode == 0, twin.stderr.decode()[-3000:]
    assert b"rank 0 done" in twin.stdout + twin.stderr and b"rank 1 done" in twin.stdout + twin.stderr
    assert run.summary()["exit_code"] == 0  # the same run directory: the second run's summary


@pytest.mark.e2e
def test_a_run_directory_too_deep_for_a_unix_socket_still_reads_the_recorder(run):
    """A socket's path is at most 107 bytes; in a deep run directory the server would bind a name cut short and
    nobody could reach it (seen under pytest-xdist's longer temporary paths). The ranks listen in a directory
    of the user's own under the temporary directory instead, and the sockets are removed when the run ends."""
    run.dir = run.tmp / ("deep-" * 12) / "run"
    assert len(str(run.dir / "heartbeat" / "flight-abcdef.sock")) > 107
    r = run(*QUICK, *_torchrun(2, "dist_fr_spin.py"))
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    incident = run.incident()
    assert incident["notes"] == [] and {c["ranks"] for c in incident["collectives"]} == {"rank 0", "rank 1"}
    assert "never entered all_reduce #4" in root_cause(incident)["summary"]
    socks = [json.loads(p.read_text())["socket"] for p in (run.dir / "heartbeat").glob("flight-*.json")]
    assert len(socks) == 2 and all(len(s) <= 107 and str(run.dir) not in s for s in socks), socks
    assert not any(os.path.exists(s) for s in socks), "left behind"


@pytest.mark.e2e
def test_a_rank_spinning_with_the_gil_still_answers_through_the_worker_server(run):
    r = run(*QUICK, *_torchrun(2, "dist_fr_spin.py"))
    assert r.returncode == 125, r.stderr.decode()[-3000:]  # a counting spin: a bug at that line
    incident = run.incident(1)  # the first look proves it: no slow incident before
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck" and root["where"]["rank"] == 1, root
    _where(root, "dist_fr_spin.py", "HANG-HERE:spin")
    assert (
        root["summary"].startswith("Rank 1 is stuck at wait_for_flag (dist_fr_spin.py:")
        and "never entered all_reduce #4 (it last completed #3), while rank 0 waits in all_reduce #4" in root["summary"]
    )
    assert root["proof"]["kind"] == "hang" and "counting spin" in root["proof"]["fact"]
    table = {c["ranks"]: c for c in incident["collectives"]}
    assert table["rank 1"]["state"] == "idle" and table["rank 1"]["last_entered"].startswith("all_reduce #3")
    assert (run.dir / "incidents" / "001" / "flight" / "rank-1.json").exists()  # C++ answered, Python could not


@pytest.mark.e2e
def test_without_the_worker_server_the_ranks_fallback_dump_is_read(run):
    """A torch without _WorkerServer (HANGWATCH_FLIGHT=fifo pretends): a thread of each rank writes the dump
    when hangwatch asks through a FIFO; the finding is the same."""
    r = run(*QUICK, *_torchrun(2, "dist_ddp_data.py", "1"), env={"HANGWATCH_FLIGHT": "fifo"})
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    root = root_cause(run.incident())
    assert root["where"]["rank"] == 1 and root["summary"].startswith("Rank 1 is stuck at load_batch"), root
    assert "while rank 0 waits in all_reduce #" in root["summary"]
    assert len(list((run.dir / "heartbeat").glob("flight-*.fifo"))) == 2
    assert not list((run.dir / "heartbeat").glob("flight-*.sock"))


@pytest.mark.e2e
def test_a_healthy_ddp_job_with_the_recorder_on_is_untouched(run):
    r = run("--min-stall", "3", "--on-hang", "kill", *_torchrun(2, "dist_ddp_data.py", "-1"))
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    assert b"done" in r.stdout and not run.touched(), run.touched()  # at most a slow start said, under load
    entries = [json.loads(p.read_text()) for p in (run.dir / "heartbeat").glob("flight-*.json")]
    assert sorted(e["rank"] for e in entries) == [0, 1], entries  # each rank served its recorder, then closed it
    assert all((e["kind"], e["was"]) == ("closed", "server") for e in entries), entries
    assert not list((run.dir / "heartbeat").glob("flight-*.sock")), "no socket is left behind"


@pytest.mark.e2e
def test_a_job_that_never_makes_a_process_group_starts_no_reader_and_the_flag_turns_it_off(run, tmp_path):
    r = run("--min-stall", "3", *py("stepper.py", "--steps", "5", "--interval", "0.05"))
    assert r.returncode == 0
    assert not list((run.dir / "heartbeat").glob("flight-*"))
    # --no-flight-recorder: neither the variables nor a reader.
    out = tmp_path / "env.json"
    script = tmp_path / "env.py"
    script.write_text(
        "import json, os, sys\njson.dump({k: v for k, v in os.environ.items() if k.startswith(("
        "'TORCH_FR', 'TORCH_NCCL_TRACE', 'HANGWATCH_FLIGHT'))}, open(sys.argv[1], 'w'))\n"
    )
    run2 = type(run)(tmp_path / "off")
    (tmp_path / "off").mkdir()
    r = run2("--no-flight-recorder", "--", sys.executable, str(script), str(out))
    assert r.returncode == 0 and json.loads(out.read_text()) == {"HANGWATCH_FLIGHT": "0"}
    r = run2("--", sys.executable, str(script), str(out), env={"TORCH_FR_BUFFER_SIZE": "64"})
    env = json.loads(out.read_text())
    assert env.get("TORCH_FR_BUFFER_SIZE") == "64" and "TORCH_NCCL_TRACE_BUFFER_SIZE" not in env  # the user's own


# --- the analysis on dumps ---------------------------------------------------------------------------------------


DUMP_WITHOUT_INDUCTOR = """
import importlib.util, json, sys, time
import torch, torch.distributed as dist
sys.path.insert(0, sys.argv[1])
from _hangwatch_hook import flight as site
dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
dist.all_reduce(torch.ones(2))
t0 = time.perf_counter()
dump = json.loads(site._fr_dump())
took = time.perf_counter() - t0
stub_left = "torch._inductor" in sys.modules
import torch._inductor.codecache  # the real one, after the dump
print(json.dumps({"took": took, "stub_left": stub_left, "real": hasattr(torch._inductor.codecache, "PyCodeCache"),
                  "frames": [f["filename"] for e in dump["entries"] for f in e.get("frames", [])]}))
"""


@pytest.mark.e2e
def test_the_first_dump_with_frames_does_not_import_inductor_and_leaves_it_importable(tmp_path):
    """torch's symbolizer would import torch._inductor (with dynamo and sympy) on a job's first dump: ~1 s
    idle, seconds on a busy machine, past the 2 s hangwatch gives the handler. It is kept out for the dump;
    the frames are there, and the job imports the real torch._inductor afterwards."""
    import subprocess

    from hangwatch.supervise.job.autobeat import AUTOBEAT_DIR

    script = tmp_path / "dump.py"
    script.write_text(DUMP_WITHOUT_INDUCTOR)
    r = subprocess.run(
        [sys.executable, str(script), str(AUTOBEAT_DIR)],
        capture_output=True,
        timeout=120,
        env={**os.environ, "TORCH_FR_BUFFER_SIZE": "100", "HANGWATCH_HEARTBEAT_DIR": ""},
    )
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    got = json.loads(r.stdout.decode().strip().splitlines()[-1])
    assert not got["stub_left"] and got["real"], got
    assert str(script) in got["frames"], got["frames"]
    assert got["took"] < 0.5, got["took"]  # ~1 s with the import (measured 0.98 s idle)


READ_WHILE_DESTROYING = """
import json, os, sys, threading, time
import torch, torch.distributed as dist
from hangwatch.capture.flight import _post, registry
dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
for _ in range(20):
    dist.all_reduce(torch.ones(2))
sock = registry(os.getpid(), os.environ["HANGWATCH_HEARTBEAT_DIR"])["socket"]
answered, refused, stop = [], [], []
def ask():
    while not stop:
        asked = time.monotonic()
        try:
            _post(sock, "hangwatch_fr", 2.0)
            answered.append(asked)  # when it was asked: one asked before the destroy may be read after it
        except Exception:
            refused.append(1)
readers = [threading.Thread(target=ask, daemon=True) for _ in range(2)]
for t in readers:
    t.start()
deadline = time.monotonic() + 30
while not answered and time.monotonic() < deadline:  # the first answer: the readers are under way
    time.sleep(0.001)
dist.destroy_process_group()  # while two readers ask for the recorder, again and again
destroyed = time.monotonic()
time.sleep(0.2)
stop.append(1)
for t in readers:  # stopped before the group is made again below: its new server would answer them
    t.join(timeout=10)
after = len([a for a in answered if a <= destroyed])
late = len([a for a in answered if a > destroyed])
closed = registry(os.getpid(), os.environ["HANGWATCH_HEARTBEAT_DIR"]) is None
# a process group made again gets its reader back; destroyed as WORLD, it closes again
dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
dist.all_reduce(torch.ones(2))
again = registry(os.getpid(), os.environ["HANGWATCH_HEARTBEAT_DIR"])
served = len(json.loads(_post(again["socket"], "hangwatch_fr", 5.0))["entries"])
dist.destroy_process_group(dist.group.WORLD)
closed_again = registry(os.getpid(), os.environ["HANGWATCH_HEARTBEAT_DIR"]) is None
print(json.dumps({"answered": after, "after_destroy": late, "refused": len(refused),
                  "closed": closed, "served_again": served, "closed_again": closed_again}), flush=True)
"""


@pytest.mark.e2e
@pytest.mark.timeout(300)  # five jobs of about 5 s each; 26 s each on a machine loaded with two busy loops
def test_the_recorder_read_again_and_again_while_the_group_is_destroyed_never_breaks_the_job(tmp_path):
    """A look that reads a rank's recorder as the rank tears its process group down: the hook's reader goes first
    (a dump under way is waited for), so the job exits 0, and no dump is answered after the destroy. Five
    processes, two readers each asking without pause."""
    import subprocess

    from hangwatch.supervise.job.autobeat import autobeat_env

    script = tmp_path / "destroy.py"
    script.write_text(READ_WHILE_DESTROYING)
    hb = tmp_path / "hb"
    hb.mkdir()
    env = {**os.environ, **autobeat_env(dict(os.environ), True, 60.0), "HANGWATCH_HEARTBEAT_DIR": str(hb)}
    for _ in range(5):
        r = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120, env=env, check=False)
        assert r.returncode == 0, r.stderr.decode()[-3000:]
        got = json.loads(r.stdout.decode().strip().splitlines()[-1])
        assert got["answered"] >= 1 and got["after_destroy"] == 0, got
        assert got["closed"] and got["served_again"] >= 1 and got["closed_again"], got


@pytest.mark.e2e
@pytest.mark.parametrize(("arg", "code"), [("8", 0), ("hang", 125)])
def test_ranks_making_one_group_under_names_that_differ_are_a_proven_ring_and_a_late_member_is_waited_for(
    run, arg, code
):
    """Rank 0 makes a group of its own that rank 1 skips (use_local_synchronization=True allows it), then both make
    a group of both: torch names it by the groups each rank made before, so the two never meet in the store
    (pytorch/pytorch#173608; first sight: `unknown`, killed by the clock). Each rank's making of the group is read
    (its name, as a digest, and its members): two names that differ are a ring of ranks, proven at the first look,
    named where it went wrong. The twin's rank 1 loads for 8 s before the same groups: rank 0 waits, untouched."""
    r = run(*QUICK, *_torchrun(2, "dist_group_names.py", arg))
    assert r.returncode == code, r.stderr.decode()[-3000:]
    if code == 0:
        assert b"rank 0 done" in r.stdout + r.stderr and b"rank 1 done" in r.stdout + r.stderr
        only_slow_incidents(run)
        return
    root = root_cause(run.hang())
    assert root["cause"] == "distributed.peer_stuck" and root["proof"]["kind"] == "hang", root
    _where(root, "dist_group_names.py", "HANG-HERE")
    assert "under a name of its own, so they never meet" in root["summary"], root["summary"]
    assert "makes a group of ranks [0, 1]" in root["summary"] and "new_group" in " ".join(root["fix"]), root


@pytest.mark.e2e
def test_two_stages_that_each_send_to_the_other_are_a_proven_cycle_and_the_batched_exchange_is_left_alone(run):
    """pytorch#172668's order on two gloo ranks: each blocks in dist.send to the other. The ranks are nodes of the
    wait-for graph, each send an edge to its peer (its `dst`, read from the call): a cycle, proven at the first look,
    in the chain's words, at the sending line of the rank that leads. The twin posts each exchange at once
    (batch_isend_irecv) while one stage computes 8 s: it finishes, untouched."""
    # a gloo send waits on a futex with the group's timeout: a wait with a timeout is said to stay after 1 s seen
    r = run(*QUICK, "--capture-window", "2", *_torchrun(2, "dist_p2p.py", "cycle"))
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    incident = run.hang()
    root = root_cause(incident)
    assert root["cause"] == "distributed.peer_stuck" and root["proof"]["kind"] == "hang", root
    rank = root["where"]["rank"]
    _where(root, "dist_p2p.py", f"HANG-HERE:send{rank}")
    s = root["summary"]
    assert "sends to rank" in s and "each waits for the other to post the matching call" in s, s
    assert f"sends to rank {1 - rank} at stage{rank}_cycle (dist_p2p.py:" in s, s
    assert any(c["ending"] == "cycle" for c in incident["graph"]["chains"]), incident["graph"]
    twin = run(*QUICK, *_torchrun(2, "dist_p2p.py", "batched", "8"))
    assert twin.returncode == 0, twin.stderr.decode()[-3000:]
    assert b"rank 0 done" in twin.stdout + twin.stderr and b"rank 1 done" in twin.stdout + twin.stderr
    assert run.summary()["exit_code"] == 0


@pytest.mark.e2e
@pytest.mark.parametrize(("args", "code"), [(("tags", "8"), 0), (("tags",), 125)])
def test_a_send_and_a_receive_whose_tags_differ_are_no_pair(run, args, code):
    """Stage 0 sends tag 1 then tag 0, stage 1 receives tag 0 first (diffusion-pipe#409): the peers match, the tags
    do not, and a gloo send completes only on a receive with its tag. The pair was taken as matched (no edge), so the
    look said child.wait, unproven, ended by the clock (exit 124). The tags are read with the peers: a cycle, proven
    at the first look. The twin's stage 1 receives in stage 0's order after 8 s, and the job ends."""
    r = run(*QUICK, "--capture-window", "2", *_torchrun(2, "dist_p2p.py", *args))
    assert r.returncode == code, r.stderr.decode()[-3000:]
    if code == 0:
        assert run.summary()["exit_code"] == 0
        return
    incident = run.hang()
    root = root_cause(incident)
    assert root["proof"]["kind"] == "hang" and any(c["ending"] == "cycle" for c in incident["graph"]["chains"]), root
    said = root["summary"] + " ".join(root["evidence"])
    assert "with tag 1" in said and "with tag 0" in said and "same tag" in root["fix"][0], said
    assert "different collectives" not in said, said  # (a send and a receive are no collectives that diverged)
    _where(root, "dist_p2p.py", f"HANG-HERE:tag{root['where']['rank']}")


@pytest.mark.e2e
@pytest.mark.parametrize("n", [3, 4])
def test_a_barrier_skipped_right_before_the_hang_is_named_at_the_line_it_skipped(run, n):
    """The last rank skips a barrier inside an `if` right before the barrier every rank calls: its barrier
    completes the others' first one, and the hang comes at the very next call (their second barrier against its
    next all_reduce). The majority decides from the one pair the recorders hold after the shift: the rank that
    skipped it, at the line it skipped, not the all_reduce where it waits."""
    r = run(*QUICK, *_torchrun(n, "dist_skew.py", "skipnext"))
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    root = root_cause(run.hang())
    assert root["cause"] == "distributed.peer_stuck" and root["proof"]["kind"] == "hang", root
    _where(root, "dist_skew.py", "HANG-HERE:skipped")
    assert root["where"]["rank"] == n - 1, root["where"]
    _, line = marker("dist_skew.py", "HANG-HERE:skipped")
    assert root["summary"].startswith(f"Rank {n - 1} never called barrier at dist_skew.py:{line} (collective #"), root
