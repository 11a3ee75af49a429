"""A wait is proven hung only when no holder of what it waits on has a way out of its own (issue [1/5]). Two healthy
jobs were proven hung and killed at the first look: a server reading a queue that main and a sleeping producer both
hold, while main waits on the server (the chain went through main, back to the server: "a cycle"); and a lock main
holds and a threading.Timer of main will release (main's process read as blocked: its main thread's state alone).
Kernel files whose end the kernel says: a pidfd (its process's exit), a timerfd (its timer), a signalfd (its
signals). Each both ways on real processes, with `inspect` deciding as `run` does."""

from __future__ import annotations

import sys

import pytest
from conftest import SCENARIOS, inspect_json, kcmp_says, marker, root_cause


def _judged(start_job, argv: list[str]) -> tuple[str, dict, bool]:
    """The job started, looked at once: its verdict, its root cause, and whether that proves a hang."""
    job = start_job([sys.executable, *argv], env={"PYTHONPATH": str(SCENARIOS)})
    incident = inspect_json(job.pid, window=1)
    root = root_cause(incident)
    return incident["verdict"], root, root["proof"] is not None and root["proof"]["kind"] == "hang"


def _scenario(script: str, hang: bool) -> list[str]:
    return [str(SCENARIOS / script), "hang" if hang else "twin"]


def _written(tmp_path, name: str, text: str) -> list[str]:
    """A script of the test's own, as a file (its frames are the user's, as in a job's own script)."""
    (tmp_path / name).write_text(text)
    return [str(tmp_path / name)]


@pytest.mark.e2e
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_a_holder_alive_only_through_the_waiter_is_no_way_out(start_job, hang):
    """The server's read of the queue ends when any holder of its write end writes: main (waiting on the server) or
    the producer. The producer gone, main and the server wait on each other: proven. The producer asleep on its timer
    (600 s, within the bounds), it will write: the server's chain ends there, not in a cycle through main; so does the
    chain of a watcher child that waits on main (a holder ranked from further up the chain is no way out either)."""
    verdict, root, proven = _judged(start_job, _scenario("server_child_reads_a_queue.py", hang))
    assert proven is hang and (verdict == "hung") is hang, (verdict, root)
    if not hang:
        assert "a cycle" not in root["summary"] and "asleep" in root["summary"], root["summary"]


@pytest.mark.e2e
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_a_lock_a_timer_of_its_holder_releases_is_waited_for_not_hung(start_job, hang):
    """Main holds a multiprocessing lock its children wait for, and waits on their pipes. With nothing of main that
    could release it, a cycle: proven. With a threading.Timer of main due within the bounds (its function releases the
    lock), main's process may act: slow, not hung (it was hung without proof, killed at --min-stall)."""
    verdict, root, proven = _judged(start_job, _scenario("lock_released_by_a_timer.py", hang))
    assert proven is hang and (verdict == "hung") is hang, (verdict, root)


@pytest.mark.e2e
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_a_timer_that_rearms_itself_is_no_way_out_but_a_one_shot_beside_it_is(start_job, hang):
    """The same cycle beside a heartbeat: a Timer whose function starts the next Timer (read from the user's source)
    wakes every 30 s but is no one-shot way out: hung, for --min-stall (it was slow, bounded only by --max-slow, with
    the Timer read as a way out). Not proven: a thread of main wakes. The twin adds a one-shot Timer that releases the
    lock: two Timer threads, one re-arming chain, so one fires once: slow."""
    verdict, root, _ = _judged(start_job, _scenario("lock_held_beside_a_heartbeat.py", hang))
    assert (verdict == "hung") is hang, (verdict, root)


RING = (
    "import queue, threading, time\nfrom _ready import ready\nqa, qb = queue.Queue(), queue.Queue()\n"
    "def a():\n{seed}    qb.put(qa.get())\n"
    "def b():\n    qa.put(qb.get())\n"
    "ts = [threading.Thread(target=f, name=f.__name__) for f in (a, b)]\n"
    "for t in ts:\n    t.start()\nready()\nfor t in ts:\n    t.join()\n"
)


@pytest.mark.e2e
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_threads_that_each_get_from_the_others_queue_are_said_to_wait_on_each_other(start_job, tmp_path, hang):
    """Two stage threads, each first getting from the other's queue, joined by main: proven, and the words said the
    thread to put "has exited or never started" (both were alive, waiting). Now they say where each waits, with the
    fix for threads that wait on each other. The twin's first stage puts first, after a sleep of 600 s."""
    seed = "" if hang else "    time.sleep(600)\n    qb.put(1)\n"
    verdict, root, proven = _judged(start_job, _written(tmp_path, "ring.py", RING.replace("{seed}", seed)))
    assert proven is hang and (verdict == "hung") is hang, root
    if hang:
        assert "thread 'a' on a queue at a (ring.py:5)" in root["summary"], root["summary"]
        assert "thread 'b' on a queue at b (ring.py:7)" in root["summary"], root["summary"]
        assert not any("has exited or never started" in f for f in root["fix"]), root["fix"]


PIDFD = (
    "import os, select, subprocess, sys\nfrom _ready import ready\n"
    "p = subprocess.Popen([sys.executable, '-c', {code!r}], stdin=subprocess.PIPE)\n"
    "fd = os.pidfd_open(p.pid)\nready()\nselect.select([fd], [], [])\n"
)


@pytest.mark.e2e
@pytest.mark.parametrize("child", ["cycle", "pause", "twin"])
def test_a_poll_of_a_pidfd_waits_for_that_processs_exit(start_job, tmp_path, child):
    """A pidfd (pidfd_open, asyncio's child watcher from Python 3.12) is ready when its process exits: the poll is a
    wait for that exit. The child reads the stdin main holds and never writes: a cycle, proven (was `unknown`, at the
    clock). The child in signal.pause() with no handler: proven, with the words of a pause and a pidfd's fix (at first
    sight: a pipe's fix, and its child said to wait "on a lock or event of its own"). The twin's child sleeps 600 s:
    slow."""
    hang = child != "twin"
    code = {"cycle": "import sys; sys.stdin.read()", "pause": "import signal; signal.pause()"}.get(
        child, "import time; time.sleep(600)"
    )
    script = _written(tmp_path, "pidfd.py", PIDFD.format(code=code))
    verdict, root, proven = _judged(start_job, script)
    assert proven is hang and (verdict == "hung") is hang, root
    assert (root["where"]["file"], root["where"]["line"]) == (script[0], 6), root
    if child == "cycle":
        assert "polls a pidfd of pid " in root["summary"] and "a cycle" in root["summary"], root["summary"]
    if child == "pause":
        assert "polls a pidfd of pid " in root["summary"] and "for a signal alone" in root["proof"]["fact"], root[
            "proof"
        ]
        assert "pidfd" in root["fix"][0] and "pipe" not in " ".join(root["fix"]), root["fix"]


TIMERFD = (
    "import ctypes, os\nfrom _ready import ready\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "class TS(ctypes.Structure):\n    _fields_ = [('s', ctypes.c_long), ('ns', ctypes.c_long)]\n"
    "fd = libc.timerfd_create(1, 0)\n"  # CLOCK_MONOTONIC
    "libc.timerfd_settime(fd, 0, ctypes.byref((TS * 2)(TS(0, 0), TS({secs}, 0))), None)\nready()\nos.read(fd, 8)\n"
)


@pytest.mark.e2e
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_a_read_of_a_timerfd_waits_for_its_timer(start_job, tmp_path, hang):
    """A read of a timerfd ends when its timer fires (its fdinfo's it_value). Armed for 600 s (within the bounds), it
    is a sleep: slow, not hung (it was `unknown` and hung, killed at --min-stall, a timer away from its end). Disarmed
    (mavlink-router#256), only a re-arm ends it: hung, proven where its process alone holds it and no thread of it
    could re-arm it (test_own_fds.py has the twins; was: left to --min-stall)."""
    if hang and not kcmp_says():
        pytest.skip("this kernel does not say which processes share a file (kcmp): nothing can be proven")
    verdict, root, _ = _judged(start_job, _written(tmp_path, "tick.py", TIMERFD.format(secs=0 if hang else 600)))
    proven = root["proof"] is not None and root["proof"]["kind"] == "hang"
    assert (verdict == "hung") is hang and proven is hang, (verdict, root)
    if not hang:
        assert "reads a timerfd at <module> (tick.py:9): its timer fires in 59" in root["summary"], root["summary"]


SIGNALFD = (
    "import ctypes, os, signal, subprocess, sys\nfrom _ready import ready\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGUSR1}})\n"
    "fd = libc.signalfd(-1, ctypes.byref(ctypes.c_uint64(1 << (signal.SIGUSR1 - 1))), 0)\n"
    "p = subprocess.Popen([sys.executable, '-c', {code!r}])\n{wait}ready()\nos.read(fd, 128)\n"
)


@pytest.mark.e2e
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_a_read_of_a_signalfd_waits_for_its_signals(start_job, tmp_path, hang):
    """A read of a signalfd ends when a signal of its mask (fdinfo's sigmask) comes: a sigwait, named with who could
    send it (was `unknown`). The child that was to send SIGUSR1 exited first: hung, not proven (a process outside the
    job may still send it: --min-stall decides). The twin's child sleeps 600 s before it sends: slow."""
    send = "import os, time; time.sleep(600); os.kill(os.getppid(), 10)"
    text = SIGNALFD.format(code="pass" if hang else send, wait="p.wait(30)\n" if hang else "")
    verdict, root, _ = _judged(start_job, _written(tmp_path, "sig.py", text))
    assert (verdict == "hung") is hang and root["proof"] is None, (verdict, root)
    assert "its read of a signalfd ends when SIGUSR1 comes" in root["summary"], root["summary"]


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["hang", "twin", "outside", "serve"])
def test_a_loop_through_a_process_whose_every_thread_waits_on_it_is_a_cycle(start_job, how):
    """asyncio's communicate(None) leaves `cat`'s stdin open: the event loop awaits cat's output, its child watcher
    thread waits for cat's exit, cat reads the stdin the parent holds. Each thread of the parent that could act waits
    on the loop: a cycle, proven (was "a loop of waits, not proven": the watcher thread, able to wake, kept the
    parent's process open, and the clock ended it). Twins: a third thread of the parent's will close cat's stdin, after
    a sleep of 600 s, or after a helper child off the loop answers: each may act, so no proof; the loop serves clients
    on a listening socket, cat kept as its worker (main's own wait is on no process of the loop: a client may come)."""
    verdict, root, proven = _judged(start_job, [str(SCENARIOS / "asyncio_child_reads_its_stdin.py"), how])
    assert proven is (how == "hang"), (verdict, root)
    assert how == "serve" or (verdict == "hung") is (how == "hang"), (verdict, root)  # (idle, serving: the clock's)
    if how == "hang":
        assert "a cycle" in root["summary"] and "waits for its child" in root["summary"], root["summary"]
        assert (root["where"]["file"], root["where"]["line"]) == marker("asyncio_child_reads_its_stdin.py"), root


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["hang", "twin", "thread", "setexit", "daemon"])
def test_a_loop_on_a_value_no_living_process_can_write_never_ends(start_job, how):
    """Main polls a multiprocessing Value its child was to set, sleeping between reads; the child died first. Nothing
    of the job lives to write that memory, and no thread or handler of main's could: proven at the first look (it was
    slow, "woke up", bounded only by --max-slow). Twins: the child lives and sets it after 600 s; the child died but a
    thread of main's sets it after 600 s: each may, so no proof; the child set it and exited while main sleeps 600 s
    between reads: main has not read it since (a loop proven only where it was seen to read again and again); a
    daemon the child forked off (a session of its own, off the job's tree) sets it after 600 s: it maps the heap."""
    verdict, root, proven = _judged(start_job, [str(SCENARIOS / "mp_value_flag_setter_died.py"), how])
    assert proven is (how == "hang") and (verdict == "hung") is (how == "hang"), (verdict, root)
    if how == "hang":
        assert "no other process of the job lived in the window to write it" in root["summary"], root["summary"]
        assert (root["where"]["file"], root["where"]["line"]) == marker("mp_value_flag_setter_died.py"), root


@pytest.mark.e2e
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_a_socket_whose_other_end_a_child_of_the_job_holds_is_no_network_wait(start_job, hang):
    """Main asks a server child of its own over 127.0.0.1; the child waits on a queue whose producer died. The cycle
    was proven, but named `io.network_wait`, "blocked waiting for the network", with a download's fixes (timeouts,
    Hugging Face's variables, DNS and firewalls). The peer is a process of the job: the chain names it. The twin's
    producer answers after 600 s: not proven."""
    verdict, root, proven = _judged(start_job, _scenario("socket_to_a_server_child.py", hang))
    assert proven is hang and (verdict == "hung") is hang, (verdict, root)
    assert root["cause"] != "io.network_wait" and "network" not in root["summary"], root
    if hang:
        assert "a cycle" in root["summary"] and not any("HF_HUB" in f for f in root["fix"]), root
        assert (root["where"]["file"], root["where"]["line"]) == marker("socket_to_a_server_child.py"), root
