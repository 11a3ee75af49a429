"""The wait-for graph (issue [1/5]): who waits on whom, and whether the end of the chain can ever move.

Both ways on real processes (a parent in os.waitpid for a forked child: the child packs a shard at full CPU,
its locals walking the data, and is waited for; the same child spinning on a state nobody changes is a hang),
and the chain follower on tables: every ending decides as documented, and an inverted one fails here.

Here the tests that start real processes; those that start none are in tests/unit/test_wait_graph.py.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import Run, inspect_json, marker, py, root_cause, two_free_ports

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
    ("mode", "verdict", "proof"), [("blocked", "hung", "hang"), ("work", "slow", "work"), ("sleep", "slow", None)]
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
        ("unix", "work", "slow", "work"),
        ("tcp", "sleep", "slow", None),
    ],
)
def test_a_socket_read_follows_its_peer_outside_the_job(start_job, tmp_path, sock, mode, verdict, proof):
    """A read of a unix socket or a loopback connection waits for whoever holds the other end (found by inode
    through the kernel's socket tables): parked, it is proven hung; working, it is slow with that work as proof;
    asleep, it is slow."""
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
def test_a_debugger_prompt_on_a_terminal_is_a_person_and_the_peers_wait_carries_that_proof(run: Run):
    """dist.breakpoint() opens /dev/stdin again: that read is the job's standard input, here a terminal nobody types
    at. Rank 1's chain ends at a person; the peers' wait carries that proof and says why rank 1 is stuck. (On a pipe,
    the pipe's writers would decide instead: test_judgment.py's prompt answered after the first look.)"""
    master, slave = pty.openpty()
    try:
        p = run.start(
            "--min-stall",
            "5",
            "--on-hang",
            "kill",
            *py("dist_breakpoint.py"),
            stdin=slave,
            env={"HW_PORT": str(two_free_ports()), "HW_TMP": str(run.tmp)},
        )
        os.close(slave)
        _, err = p.communicate(timeout=90)
    finally:
        os.close(master)
    assert p.returncode == 125, err.decode()[-2000:]
    incident = run.incident()
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"], root["proof"]["kind"]) == ("hung", "distributed.peer_stuck", "hang")
    assert (root["where"]["file"], root["where"]["line"], root["where"]["rank"]) == (*marker("dist_breakpoint.py"), 1)
    assert "Rank 1 is stuck at a debugger prompt" in root["summary"] and "rank 0 waits in barrier" in root["summary"]
    prompt = next(f for f in incident["findings"] if f["cause"] == "process.waits_for_input")
    assert prompt["where"]["line"] == root["where"]["line"] and prompt["proof"]["kind"] == "hang", prompt
    assert _chain_of(incident, root["where"]["pid"])["ending"] == "person"


@pytest.mark.e2e
def test_a_pipe_whose_only_writer_is_the_reader_is_proven_hung(start_job):
    job = start_job("pipe_self_held.py")
    incident = inspect_json(job.pid)
    root = root_cause(incident)
    assert (incident["verdict"], root["cause"]) == ("hung", "process.waits_on"), root
    assert (root["where"]["file"], root["where"]["line"]) == marker("pipe_self_held.py"), root["where"]
    assert root["proof"]["kind"] == "hang" and "only it holds its write end" in root["proof"]["fact"]


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


@pytest.mark.e2e
def test_a_native_relative_sleep_tells_at_least_what_is_left():
    """`sleep 100000` sleeps with a relative request: what is left is at least the request less the thread's age,
    read from the kernel (the call's arguments and the request in the target's memory). A 1-s sleep in a loop
    tells nothing (nothing is surely left)."""
    from hangwatch.capture.syscalls import read_blocked_call

    long_one = subprocess.Popen(["sleep", "100000"])
    short_loop = subprocess.Popen(["sh", "-c", "while :; do sleep 1; done"])
    try:
        time.sleep(1.5)
        call = read_blocked_call(long_one.pid, long_one.pid)
        assert call is not None and call.timeout is True
        assert call.wakes_in is not None and 100000 - 5 < call.wakes_in <= 100000, call
        kid = psutil.Process(short_loop.pid).children()
        if kid:
            call = read_blocked_call(kid[0].pid, kid[0].pid)
            assert call is None or call.wakes_in is None or call.wakes_in <= 1.0, call
    finally:
        kids = psutil.Process(short_loop.pid).children(recursive=True)
        for p in (long_one, short_loop):
            p.kill()
            p.wait(timeout=10)
        for k in kids:
            k.kill()
        psutil.wait_procs(kids, timeout=10)


@pytest.mark.e2e
def test_a_select_with_a_timeout_tells_its_request():
    """`select.select(rlist, [], [], 30)` passes its timeout by address (a timeval; pselect6, a timespec): read from
    the target's memory, it is the most the call may still wait (``wait_max``: the job comes back by then); one with
    no timeout has none. Was read as timed, with no figure: a job that killed its child after such a select was
    proven hung through that child (tests/e2e/test_judgment.py, `select`)."""
    from hangwatch.capture.syscalls import read_blocked_call

    code = "import os, select, sys; r, w = os.pipe(); select.select([r], [], [], *map(float, sys.argv[1:]))"
    timed = subprocess.Popen([sys.executable, "-c", code, "30"])
    forever = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline, call = time.monotonic() + 20, None
        while time.monotonic() < deadline and (call is None or call.wait_max is None):  # (until it is in its select)
            time.sleep(0.2)
            call = read_blocked_call(timed.pid, timed.pid)
        assert call is not None and call.timeout is True and call.wait_max is not None, call
        assert 20 < call.wait_max <= 30, call
        while time.monotonic() < deadline and (call := read_blocked_call(forever.pid, forever.pid)) is None:
            time.sleep(0.2)
        assert call is not None and call.timeout is False and call.wait_max is None, call
    finally:
        for p in (timed, forever):
            p.kill()
            p.wait(timeout=10)


@pytest.mark.e2e
def test_a_sleep_resumed_after_a_stop_still_tells_what_is_left():
    """A stop (a stack read's, SIGSTOP's) ends a sleep's call, and the kernel resumes it as ``restart_syscall``: its
    number is gone, and its wait channel may be no sleep's (``do_syscall_64``). Its registers are the sleep's: the
    timer of a native relative `sleep(100000)` is still read (at least the request less the thread's age). Was
    unread: a thread holding the GIL in such a sleep read alive. Python's `time.sleep(90000)` sleeps to an absolute
    deadline, a call the kernel simply makes again: read as before."""
    from hangwatch.capture.syscalls import RESTART_NR, read_blocked_call

    native = subprocess.Popen([sys.executable, "-c", "import ctypes; ctypes.CDLL(None).sleep(100000)"])
    python = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(90000)"])
    try:
        for p, seconds, restarted in ((native, 100000, True), (python, 90000, False)):
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and read_blocked_call(p.pid, p.pid) is None:
                time.sleep(0.1)
            os.kill(p.pid, signal.SIGSTOP)
            os.kill(p.pid, signal.SIGCONT)
            deadline = time.monotonic() + 10
            raw = ""
            while time.monotonic() < deadline and not (
                raw[:1].isdigit() and psutil.Process(p.pid).status() == "sleeping"
            ):
                time.sleep(0.05)
                raw = Path(f"/proc/{p.pid}/syscall").read_text()
            assert raw.startswith(f"{RESTART_NR} ") is restarted, raw
            call = read_blocked_call(p.pid, p.pid)
            assert call is not None and call.name in ("nanosleep", "clock_nanosleep"), call
            assert call.wakes_in is not None and seconds - 30 < call.wakes_in <= seconds, call
    finally:
        for p in (native, python):
            p.kill()
            p.wait(timeout=10)


@pytest.mark.e2e
def test_a_futex_waits_deadline_and_a_polls_least_left_are_read_from_the_kernel():
    """A thread in ``Event.wait(5000)`` (a futex wait to an absolute deadline), one in a multiprocessing lock's
    ``acquire(timeout=6000)`` (a futex shared between processes) and a ``poll`` with a timeout of 7000 s (a relative
    one: at least the request less the thread's age is left) tell what is left of their timers, read from the kernel,
    after a stack read's stop too (the call restarts, the futex still shared); a wait with no timeout tells none."""
    from hangwatch.capture.stacks import find_py_spy
    from hangwatch.capture.syscalls import BlockedCall, read_blocked_call

    code = (
        "import multiprocessing, select, threading\n"
        "threading.Thread(target=threading.Event().wait, args=(5000,), daemon=True).start()\n"
        "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
        "lock = multiprocessing.Lock()\n"
        "lock.acquire()\n"
        "threading.Thread(target=lock.acquire, args=(True, 6000), daemon=True).start()\n"
        "select.poll().poll(7000 * 1000)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code])

    def calls() -> dict[int, BlockedCall | None]:
        return {t.id: read_blocked_call(p.pid, t.id) for t in psutil.Process(p.pid).threads()}

    def near(c: BlockedCall | None, seconds: float) -> bool:
        return c is not None and c.wakes_in is not None and seconds - 15 < c.wakes_in <= seconds

    try:
        deadline = time.monotonic() + 20
        got = calls()
        while time.monotonic() < deadline and not (len(got) == 4 and all(c is not None for c in got.values())):
            time.sleep(0.2)
            got = calls()
        main = got.pop(p.pid)
        assert main is not None and main.timeout is True and near(main, 7000), main
        event = next(t for t, c in got.items() if near(c, 5000))
        shared = next(t for t, c in got.items() if near(c, 6000))
        assert all(c is not None for c in got.values()), got
        assert got[shared].shared and not got[event].shared, got
        assert [c.wakes_in for t, c in got.items() if t not in (event, shared)] == [None], got
        spy = find_py_spy()
        assert spy is not None
        subprocess.run([spy, "dump", "--pid", str(p.pid)], capture_output=True, timeout=30, check=False)
        # restarted after the stop: under load a thread may not have run again yet (its call not re-entered)
        deadline = time.monotonic() + 10
        again = {t: read_blocked_call(p.pid, t) for t in (event, shared)}
        while time.monotonic() < deadline and not all(c is not None for c in again.values()):
            time.sleep(0.1)
            again = {t: read_blocked_call(p.pid, t) for t in (event, shared)}
        assert near(again[event], 5000) and near(again[shared], 6000), again
        assert again[shared].shared and not again[event].shared, again
    finally:
        p.kill()
        p.wait(timeout=10)


@pytest.mark.e2e
def test_the_loop_of_a_python_c_helper_is_read_from_its_command_line():
    """A helper started as `python -c "..."` has no source file: its loop is read from its command line, so a
    `while True: time.sleep(1)` with no way out is told from a bounded one."""
    from hangwatch.capture.locals import _loop_at
    from hangwatch.diagnose.loops import never_exits

    endless = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
    bounded = subprocess.Popen([sys.executable, "-c", "import time\nfor _ in range(60): time.sleep(1)"])
    try:
        time.sleep(1.0)
        loop = _loop_at("<string>", 2, endless.pid)
        assert loop is not None and loop[0] == "while True" and never_exits(loop[1])
        loop = _loop_at("<string>", 2, bounded.pid)
        assert loop is not None and never_exits(loop[1]) is None
        assert _loop_at("<string>", 2, os.getpid()) is None  # pytest is no `-c` process
    finally:
        for p in (endless, bounded):
            p.kill()
            p.wait(timeout=10)


@pytest.mark.e2e
def test_a_native_child_fed_by_a_stdin_its_parent_never_closes_is_a_proven_cycle_at_the_first_look(tmp_path):
    """sort reads its stdin, whose write end the parent holds; the parent reads sort's output: a cycle through a
    native process, declared at the first look with the defaults, at the parent's line. Its twin (the parent computes
    12 s, then closes stdin) finishes untouched: a holder that works ends no proof."""
    cases = [({}, 125), ({"HW_CLOSE": "1", "HW_WORK_S": "12"}, 0)]
    runs = []
    for i, (env, _) in enumerate(cases):
        d = tmp_path / f"r{i}"
        d.mkdir()
        r = Run(d)
        r.start("--on-hang", "kill", *py("child_stdin_open.py"), env=env)
        runs.append((r, time.monotonic()))
    outcomes = []
    try:
        for r, t0 in runs:
            assert r.proc is not None
            _, err = r.proc.communicate(timeout=max(1.0, 90 - (time.monotonic() - t0)))
            outcomes.append((r.proc.returncode, err))
    finally:
        left = [p for r, _ in runs for p in r.cleanup()]
    assert not left, f"left behind: {left}"
    (hung, _), (twin, _) = runs
    assert outcomes[0][0] == 125, outcomes[0][1].decode()[-2000:]
    incident = hung.incident()
    root = root_cause(incident)
    assert incident["verdict"] == "hung" and root["proof"]["kind"] == "hang", root
    assert "a cycle" in root["proof"]["fact"] and "holds its write end" in root["proof"]["fact"], root["proof"]
    assert (root["where"]["file"], root["where"]["line"]) == marker("child_stdin_open.py"), root["where"]
    assert incident["detected_at"] - hung.events()[1]["at"] <= 25.0
    assert outcomes[1][0] == 0, outcomes[1][1].decode()[-2000:]
    assert twin.summary()["incidents"] == 0


@pytest.mark.e2e
@pytest.mark.timeout(90)
@pytest.mark.parametrize(("arg", "proven"), [("hang", True), ("30", False)])
def test_a_pty_whose_master_the_job_holds_is_followed_though_the_host_was_not_searched_to_the_end(
    monkeypatch, arg, proven
):
    """A child reads a pty whose master only its parent holds. The job's processes are always searched for the master;
    the rest of the host only for PIPE_SCAN_S. On a busy host that search was cut short, the wait was not recorded,
    and the child's read became a person's at the terminal: proven, and a healthy job whose parent serves the master
    after a while was killed (CI, under load). Here the host's search is cut short at once (a budget of 0 s): the
    wait is still the parent's, with the note that says so; the hang is the cycle it was, and the twin is not proven."""
    from hangwatch.capture import pipes
    from hangwatch.capture.sampler import capture_job
    from hangwatch.capture.syscalls import read_blocked_call
    from hangwatch.diagnose import diagnose

    whole = pipes.pty_masters
    monkeypatch.setattr(pipes, "pty_masters", lambda index, first, budget_s=0.0: whole(index, first, 0.0))
    script = str(Path(__file__).parents[1] / "scenarios" / "pty_child_unanswered.py")
    p = subprocess.Popen([sys.executable, script, "ask", arg], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert p.stdout is not None and p.stdout.readline().startswith(b"child started")
        child = psutil.Process(p.pid).children()[0].pid
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (read_blocked_call(child, child) or None) is None:
            time.sleep(0.1)
        ev = capture_job(p.pid, window_s=1.0, gpu=False, kernel=False, flight=False)
        waits = [w for v in ev.processes if v.info.pid == child for w in v.waits]
        wait = next((w for w in waits if (w.path or "").startswith("the pseudo-terminal /dev/pts/")), None)
        assert wait is not None, waits
        assert [h.pid for h in wait.holders] == [p.pid] and "searched for" in (wait.note or ""), wait
        incident = diagnose(ev)
        said = incident.root.summary
        assert incident.root.proves_hang is proven and "someone to type" not in said, said
        if proven:
            assert "a cycle" in said, said
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)


SAY_READY = "import os\nwith open(os.environ['HW_READY'], 'a') as f:\n    f.write(f'ready {os.getpid()}\\n')\n"
ALARMED = {
    "event": "import signal, threading\nev = threading.Event()\nsignal.signal(signal.SIGALRM, lambda *a: ev.set())\n"
    "signal.alarm(600)\n" + SAY_READY + "ev.wait()\n",
    "pause": "import signal\nsignal.signal(signal.SIGALRM, lambda *a: None)\nsignal.setitimer(signal.ITIMER_REAL, 600)\n"
    + SAY_READY
    + "signal.pause()\n",
}


@pytest.mark.e2e
@pytest.mark.parametrize("wait", sorted(ALARMED))
def test_a_wait_its_own_alarm_may_end_is_never_proven_and_the_words_say_the_timer(start_job, wait):
    """Main waits on an Event its SIGALRM handler sets, or in signal.pause(), after signal.alarm / setitimer: the
    kernel's timer sends the signal, and its time is not shown in /proc. It was said that "only a process outside the
    job could send one": its own timer can. No proof of a hang; the words say the timer, unread."""
    job = start_job([sys.executable, "-c", ALARMED[wait]])
    incident = inspect_json(job.pid, window=1)
    root = root_cause(incident)
    assert root["proof"] is None or root["proof"]["kind"] != "hang", root
    assert "a timer of its own (signal.alarm, setitimer)" in root["summary"], root["summary"]
    assert "only a process outside the job could send one" not in root["summary"].split("; else ")[0], root
